-- :n due jobs in queue 'bench' in the three tables, spread over the 10,000 sessions; what a run left
-- behind goes first. Finished "filler" jobs (result {"filler": true}) stay.
delete from ai.agent_jobs where queue = 'bench' and result is distinct from '{"filler": true}';
delete from bench_queue.jobs where result is distinct from '{"filler": true}';
delete from bench_queue.required_jobs;
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'bq-' || (i % 10000), 'bench_worker', 'bench', now(), now(), now() from generate_series(1, :n) i;
insert into bench_queue.jobs (thread_id, queue) select 'bq-' || (i % 10000), 'bench' from generate_series(1, :n) i;
insert into bench_queue.required_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'bq-' || (i % 10000), 'bench_worker', 'bench', now(), now(), now() from generate_series(1, :n) i;
vacuum analyze ai.agent_jobs;
vacuum analyze bench_queue.jobs;
vacuum analyze bench_queue.required_jobs;
