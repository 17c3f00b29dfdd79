\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.enqueue_job('qa1', jsonb_build_object('n', n))) from generate_series(1, 5) n \gset
select (ai.enqueue_job('qa2')).job_id as other \gset
set local role app_service;
create temp table c on commit drop as select * from ai.claim_jobs('w', '1 minute', 'default', 10);
select is((select count(*)::int from c), 2, 'one job of qa1 and one of qa2');
select is((select payload from c where thread_id = 'qa1'), '{"n": 1}'::jsonb, 'the first job of qa1');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_jobs where status = 'PENDING' and thread_id = 'qa1'), 4, 'the other four stay PENDING');
set local role app_service;
select is_empty($$select * from ai.claim_jobs('w', '1 minute', 'default', 10)$$, 'both threads are busy now');

select * from finish();
rollback;
