\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', '@tenant_a', max_in_flight => 1) is not null as set \gset
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 59) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 59) n),
                                              array(select '{}'::jsonb from generate_series(10, 59) n)) \gset
set local role app_service;
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 1)), 1, 'tenant_a''s first job: its one slot');
-- tenant_b's job comes after tenant_a's fifty in the fair order (enqueued last, with no backlog of
-- its own it lands one step after the head); tenant_a's are all held back by its limit
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b_job \gset
set local role app_service;
select is((select job_id from ai.claim_jobs('w', '1 minute', 'default', 1)), :b_job::bigint, 'claim_jobs: past the full key''s due jobs, another key''s');
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b_job2 \gset
set local role app_service;
select is_empty($$select * from ai.claim_job('w')$$, 'claim_job: tenant_b''s thread is busy and tenant_a full: nothing');

select * from finish();
rollback;
