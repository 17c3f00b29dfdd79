\ir ../fixtures/helpers.sql
begin;
select plan(4);
delete from ai.agent_jobs;
delete from ai.agent_jobs_archive;
\ir ../fixtures/retention.sql
-- done-a and done-b finished 100 days ago, fresh-a 11 days ago; done-a's job is PENDING.
set local role app_service;
select job_id as job, fencing_token as token from ai.claim_job('w1', '1 minute') \gset
select ai.complete_job(:job, :token) is not null as completed \gset

select results_eq($$select sessions, jobs from ai.archive_backlog('90 days', '0 seconds')$$,
                  $$values (2::bigint, 1::bigint)$$, 'two sessions past 90 days, one finished job');
select results_eq($$select sessions, jobs from ai.archive_backlog('5 days', '1 day')$$,
                  $$values (3::bigint, 0::bigint)$$, 'three past 5 days; the job finished just now');
select is((select count(*) from ai.archive_sessions('90 days')), 2::bigint, 'archive_sessions moves as many');
select throws_ok($$select ai.archive_backlog(null)$$, 'AS002', null, 'a NULL interval');

select * from finish();
rollback;
