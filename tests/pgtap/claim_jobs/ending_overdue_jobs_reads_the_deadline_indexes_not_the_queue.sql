\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

-- A claim ends the jobs past their deadlines by two partial indexes that hold only jobs with a
-- deadline: in a queue of 2,000 due jobs without any, it reads each index once and no row of the
-- queue beyond the one it claims (counted in this transaction: pg_stat_get_xact_*).
reset role;
-- (in the fair order, as enqueue_job places a job due now: key and vtime set)
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at, key, vtime)
select 'qa1', 'tenant_a', 'big', '2029-12-31 00:00:00+00', now(), now(), '@tenant_a', g from generate_series(1, 2000) g;
analyze ai.agent_jobs;
select pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs_deadline'::regclass) as d0,
       pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs_start_by'::regclass) as s0,
       pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs'::regclass) as seq0 \gset
set local role app_service;
select count(*) as claimed from ai.claim_jobs('w1', '1 minute', 'big', 1) \gset
reset role;
select is(:claimed::int, 1, 'the claim took a job');
select ok(pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs_deadline'::regclass) > :d0
          and pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs_start_by'::regclass) > :s0,
          'it looked for overdue jobs in the two deadline indexes');
select is(pg_catalog.pg_stat_get_xact_numscans('ai.agent_jobs'::regclass) - :seq0, 0::bigint,
          'and scanned no table: no sequential scan of the queue');

select * from finish();
rollback;
