\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1') is not null as queued \gset
select throws_ok($$select ai.claim_job('w')$$, '42501', 'permission denied for function claim_job', 'a tenant cannot claim');
select throws_ok($$select ai.claim_jobs('w', '1 minute', 'default', 10)$$, '42501', 'permission denied for function claim_jobs', 'nor claim in batches');
select throws_ok($$select ai.fenced_write(1, 1)$$, '42501', 'permission denied for function fenced_write', 'nor act as a worker');

select * from finish();
rollback;
