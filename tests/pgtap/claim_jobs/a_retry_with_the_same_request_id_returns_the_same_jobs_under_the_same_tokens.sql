\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
-- The first call claims a; its answer is lost. b is due as well when the retry comes.
create temp table first on commit drop as select * from ai.claim_jobs('w', '1 minute', 'default', 1, 'request-1');
select is((select count(*)::int from first), 1, 'the first call claims one job');
create temp table again on commit drop as select * from ai.claim_jobs('w', '1 minute', 'default', 1, 'request-1');
select results_eq('select job_id, fencing_token from again', 'select job_id, fencing_token from first',
                  'the retry answers with the same job under the same token');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_jobs where status = 'IN_PROGRESS'), 1, 'and claims nothing more');
set local role app_service;
select is((select count(*)::int from ai.claim_jobs('other', '1 minute', 'default', 5, 'request-1')), 1,
          'the same request id of another worker is another request');
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 5, 'request-2')), 0,
          'a new request id of the worker claims anew (nothing is left)');

select * from finish();
rollback;
