-- Capacity bench fixtures (run in the bench's own database as the role of DATABASE_URL: a
-- superuser, or a role with CREATEROLE that owns the database, bench/common.bash): a tenant (ai_user)
-- that starts runs, a worker (ai_service) that runs them, and the stock stack's role and schema:
-- the seed's bare SKIP LOCKED jobs table (a lease renewed by UPDATE, one partial index for
-- PENDING jobs), a plain messages table and a side-effect table, each with a unique idempotency
-- key. LangGraph's PostgresSaver creates its own tables in that schema (capacity.py, setup()).
do $$
begin
  if not exists (select from pg_roles where rolname = 'bench_cap_tenant') then
    create role bench_cap_tenant login;
  end if;
  if not exists (select from pg_roles where rolname = 'bench_cap_worker') then
    create role bench_cap_worker login;
  end if;
  if not exists (select from pg_roles where rolname = 'bench_cap_stock') then
    create role bench_cap_stock login;
  end if;
end $$;
grant ai_user to bench_cap_tenant;
grant ai_service to bench_cap_worker;

-- The stock role creates LangGraph's tables in the schema (setup()); the fixtures' own tables
-- belong to the role running this, which grants them (no SET ROLE: no membership needed).
drop schema if exists bench_stock cascade;
create schema bench_stock;
grant usage, create on schema bench_stock to bench_cap_stock;
create table bench_stock.jobs (
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
create index on bench_stock.jobs (queue, priority desc, run_at, job_id) where status = 'PENDING';
create table bench_stock.messages (
  seq bigint generated always as identity primary key,
  thread_id text not null,
  role text not null,
  content jsonb not null,
  idempotency_key text not null,
  created_at timestamptz not null default now(),
  unique (thread_id, idempotency_key)
);
create table bench_stock.side_effects (
  thread_id text not null,
  idempotency_key text not null,
  request jsonb not null,
  result jsonb,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (thread_id, idempotency_key)
);
grant all on all tables in schema bench_stock to bench_cap_stock;
grant all on all sequences in schema bench_stock to bench_cap_stock;
