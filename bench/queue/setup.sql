-- Queue bench fixtures (run in the bench's own database as the role of DATABASE_URL, bench/common.bash;
-- the sessions: queue/sessions.sql, as the worker): a worker role that is a
-- member of ai_service (so RLS is paid, as in production), 10,000 sessions, and the baseline: the
-- same queue table as the plain SQL of the design (no RLS, no session FK, no one-thread index).
-- 10,000 sessions: many agent threads with a few jobs each; the one-thread rule then skips little.
do $$
begin
  if not exists (select from pg_roles where rolname = 'bench_worker') then
    create role bench_worker login;
  end if;
end $$;
grant ai_service to bench_worker;

drop schema if exists bench_queue cascade;
create schema bench_queue;
create table bench_queue.jobs (
  job_id bigint generated always as identity primary key,
  thread_id text not null,
  queue text not null default 'default',
  status text not null default 'PENDING',
  payload jsonb not null default '{}',
  priority integer not null default 0,
  run_at timestamptz not null default now(),
  attempts integer not null default 0,
  lease_owner text,
  lease_expires_at timestamptz,
  result jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz
) with (fillfactor = 80);
create index on bench_queue.jobs (queue, priority desc, run_at, job_id) where status = 'PENDING';
-- What the issue requires of the table and no more: ai.agent_jobs' columns and indexes (the claim
-- index that also holds leases, the one-thread unique index) and its RLS policy, without the row
-- CHECK and the foreign key; the bare SQL runs on it as the worker (prepared-statement table).
create table bench_queue.required_jobs (like ai.agent_jobs including defaults including generated
  including identity including indexes) with (fillfactor = 80);
alter table bench_queue.required_jobs enable row level security, force row level security;
create policy required_jobs_by_owner on bench_queue.required_jobs
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- pgbench's single-row UPDATE, the ceiling
create table bench_queue.counter (id integer primary key, n bigint not null default 0) with (fillfactor = 50);
insert into bench_queue.counter (id) select generate_series(1, 1000);
grant usage on schema bench_queue to bench_worker;
grant all on all tables in schema bench_queue to bench_worker;

