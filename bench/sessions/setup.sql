-- Bench fixtures (as the role of DATABASE_URL, bench/common.bash; the sessions: sessions/sessions.sql,
-- as the tenant): a tenant role (so RLS is paid, as in production), 64 sessions, and the
-- baseline tables: the same append written as the bare SQL of the design.
do $$
begin
  if not exists (select from pg_roles where rolname = 'bench_tenant') then
    create role bench_tenant login;
  end if;
end $$;
grant ai_user to bench_tenant;

drop schema if exists bench_base cascade;
create schema bench_base;
create table bench_base.sessions (thread_id text primary key, last_seq bigint not null default 0) with (fillfactor = 80);
create table bench_base.messages (
  thread_id text not null, seq bigint not null, role text not null, content jsonb not null,
  idempotency_key text not null, created_at timestamptz not null default now(),
  primary key (thread_id, seq));
create unique index on bench_base.messages (thread_id, idempotency_key);
create table bench_base.bare (id bigserial primary key, thread_id text not null, content jsonb not null);
grant usage on schema bench_base to bench_tenant;
grant all on all tables in schema bench_base to bench_tenant;
grant all on all sequences in schema bench_base to bench_tenant;
insert into bench_base.sessions select 'bench-' || i from generate_series(1, 64) i;
