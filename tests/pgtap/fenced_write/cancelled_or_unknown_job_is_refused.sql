\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select throws_ok($$select ai.fenced_write(-1, 1)$$, 'AS001', 'job -1 not found', 'unknown job');
select ai.cancel_job(:id) is not null as cancelled \gset
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'a cancelled job fences out its worker');

select * from finish();
rollback;
