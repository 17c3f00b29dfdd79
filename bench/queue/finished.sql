-- :n finished jobs in the same queue and tables, as a year of history would leave them.
begin;  -- FORCE lifted for the load only, as in fill.sql
alter table ai.agent_jobs no force row level security;
insert into ai.agent_jobs (thread_id, owner, queue, status, run_at, attempts, fencing_token, result, created_at, updated_at, finished_at)
select 'bq-' || (i % 10000), 'bench_worker', 'bench', 'COMPLETED', now(), 1, 1, '{"filler": true}', now(), now(), now()
from generate_series(1, :n) i;
insert into bench_queue.jobs (thread_id, queue, status, attempts, result, finished_at)
select 'bq-' || (i % 10000), 'bench', 'COMPLETED', 1, '{"filler": true}', now() from generate_series(1, :n) i;
alter table ai.agent_jobs force row level security;
commit;
vacuum analyze ai.agent_jobs;
vacuum analyze bench_queue.jobs;
