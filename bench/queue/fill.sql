-- :n due jobs in queue 'bench' in the three tables, spread over the 10,000 sessions; what a run left
-- behind goes first. Finished "filler" jobs (result {"filler": true}) stay.
-- As the role of DATABASE_URL: a superuser, or the schema owner, which RLS binds (FORCE): the rows
-- are loaded for bench_worker with FORCE lifted inside this transaction only.
begin;
alter table ai.agent_jobs no force row level security;
alter table bench_queue.required_jobs no force row level security;
delete from ai.agent_jobs where queue = 'bench' and result is distinct from '{"filler": true}';
delete from bench_queue.jobs where result is distinct from '{"filler": true}';
delete from bench_queue.required_jobs;
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'bq-' || (i % 10000), 'bench_worker', 'bench', now(), now(), now() from generate_series(1, :n) i;
-- a schema with fair shares (job_keys): the key and the place in the fair order enqueue_job gives
do $$
begin
  if exists (select from pg_attribute where attrelid = 'ai.agent_jobs'::regclass and attname = 'vtime') then
    update ai.agent_jobs j set key = '@' || j.owner, vtime = o.n
    from (select job_id, row_number() over (order by job_id) as n from ai.agent_jobs
          where queue = 'bench' and status = 'PENDING' and vtime is null) o
    where j.job_id = o.job_id;
  end if;
end $$;
insert into bench_queue.jobs (thread_id, queue) select 'bq-' || (i % 10000), 'bench' from generate_series(1, :n) i;
insert into bench_queue.required_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'bq-' || (i % 10000), 'bench_worker', 'bench', now(), now(), now() from generate_series(1, :n) i;
alter table ai.agent_jobs force row level security;
alter table bench_queue.required_jobs force row level security;
commit;
vacuum analyze ai.agent_jobs;
vacuum analyze bench_queue.jobs;
vacuum analyze bench_queue.required_jobs;
