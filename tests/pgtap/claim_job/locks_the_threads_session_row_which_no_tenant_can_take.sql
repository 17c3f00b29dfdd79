\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

-- The claim's per-thread lock is the thread's row in ai.agent_sessions (FOR NO KEY UPDATE, until
-- the claim commits), not an advisory-lock key any role can take.
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).job_id as claimed \gset
reset role;
create extension if not exists pgrowlocks;
select is((select modes::text from pgrowlocks('ai.agent_sessions')
           where locked_row = (select ctid from ai.agent_sessions where thread_id = 'qa1')),
          '{"For No Key Update"}', 'the claim holds the thread''s session row');
select is((select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()), 0::bigint,
          'and no advisory lock');

select * from finish();
rollback;
