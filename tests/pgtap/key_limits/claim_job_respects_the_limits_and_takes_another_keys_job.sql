\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', 'openai', max_in_flight => 1) is not null as set \gset
set local role tenant_a;
select (ai.enqueue_job('qa1', key => 'openai')).job_id as first \gset
select (ai.enqueue_job('qa2', key => 'openai')).job_id as second \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b_job \gset
set local role app_service;
select is((select job_id from ai.claim_job('w')), :first::bigint, 'the key''s first job');
select is((select job_id from ai.claim_job('w')), :b_job::bigint, 'then, the key full, another key''s job');
select is_empty($$select * from ai.claim_job('w')$$, 'then nothing: the key''s second job waits for its slot');

select * from finish();
rollback;
