\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- The lock itself: FOR KEY SHARE on the job row, held by this transaction.
select ai.fenced_write(:id, :token) is not null as locked \gset
reset role;
create extension if not exists pgrowlocks;
select is((select modes::text from pgrowlocks('ai.agent_jobs') where locked_row = (select ctid from ai.agent_jobs where job_id = :id)),
          '{"For Key Share"}', 'the job row is locked FOR KEY SHARE until the transaction ends');

select * from finish();
rollback;
