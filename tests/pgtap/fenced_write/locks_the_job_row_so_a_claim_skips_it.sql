\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

-- The lock itself: FOR KEY SHARE on the job row, held by this transaction.
select ai.fenced_write(:id, :token) is not null as locked \gset
reset role;
create extension if not exists pgrowlocks;
select is((select modes::text from pgrowlocks('ai.agent_jobs') where locked_row = (select ctid from ai.agent_jobs where job_id = :id)),
          '{"For Key Share"}', 'the job row is locked FOR KEY SHARE until the transaction ends');

select * from finish();
rollback;
