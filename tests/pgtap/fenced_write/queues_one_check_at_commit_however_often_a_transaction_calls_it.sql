\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- The first call of a transaction for (job, token) queues the check at commit (one insert into
-- ai.job_fences, whose deferred trigger is the check); later calls only probe the job.
reset role;
select pg_catalog.pg_stat_get_xact_tuples_inserted('ai.job_fences'::regclass) as ins0 \gset
set local role app_service;
select ai.fenced_write(:id, :token) is not null as fenced \gset
select ai.fenced_write(:id, :token) is not null as fenced \gset
select is(ai.fenced_write(:id, :token), '2030-01-01 00:01:00+00'::timestamptz, 'a later call still returns the lease expiry');
reset role;
select is(pg_catalog.pg_stat_get_xact_tuples_inserted('ai.job_fences'::regclass) - :ins0, 1::bigint,
          'three calls, one check queued');
set local role app_service;
-- a stale token is still refused at once on a later call
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :token + 1), 'AS006', null, 'another token is checked, and refused');

select * from finish();
rollback;
