\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

set local role tenant_a;
select ai.cancel_job(:id) is not null as cancelled \gset
set local role app_service;
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'the worker cannot complete it');
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'nor renew its lease');
select is((select count(*)::int from ai.claim_job('w2')), 0, 'and nobody claims it again');

select * from finish();
rollback;
