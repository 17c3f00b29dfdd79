\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- The check that runs at commit, fired here with SET CONSTRAINTS ... IMMEDIATE (one session):
-- the lease ended after fenced_write passed, and nobody took the job.
select ai.fenced_write(:id, :token) is not null as fenced \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok('set constraints ai.job_fences_checked_at_commit immediate', 'AS006',
                 format('job %s: lease lost before the fenced transaction committed', :id),
                 'a fenced transaction cannot commit after its lease ended');

select * from finish();
rollback;
