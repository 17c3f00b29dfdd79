\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select throws_ok($$select ai.renew_lease(-1, 1)$$, 'AS001', 'job -1 not found', 'unknown job');
select throws_ok(format('select ai.renew_lease(%s, %s, %L)', :id, :token, '0 seconds'), 'AS002', 'lease must be a positive interval, not 00:00:00', 'zero lease');

select * from finish();
rollback;
