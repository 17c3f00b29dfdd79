\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', 'openai', max_in_flight => 2) is not null as set \gset
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 14) n \gset
select count(ai.enqueue_job('qa' || n, key => 'openai')) as queued from generate_series(10, 14) n \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b_job \gset
set local role app_service;
create temp table taken as select job_id, fencing_token, key from ai.claim_jobs('w', '1 minute', 'default', 10);
select is((select count(*)::int from taken where key = 'openai'), 2, 'two of the key''s five jobs, its limit');
select is((select count(*)::int from taken where job_id = :b_job), 1, 'another key''s job is not held back');
select is_empty($$select * from ai.claim_jobs('w', '1 minute', 'default', 10)$$, 'no slot free: nothing more');
select ai.complete_job(job_id, fencing_token) is not null as done from taken where key = 'openai' order by job_id limit 1 \gset
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 1, 'a finished job gives its slot back');
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
-- both leases ran out: their two slots come back, taken by the two expired jobs (an attempt each)
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10) where key = 'openai'), 2, 'leases that ran out give their slots back');
reset role;
select is((select count(*)::int from ai.agent_jobs where key = 'openai' and status = 'IN_PROGRESS'), 2, 'never more than two running');

select * from finish();
rollback;
