-- Archive and restore per session against the size of the jobs tables (issue 21, defect 4): :n
-- jobs of other threads in ai.agent_jobs and as many in ai_archive.agent_jobs, then :k finished
-- sessions with two jobs each. Run as a superuser in the bench's own database (bulk loads); the
-- timed part is bench/retention/scale_timed.sql, as the worker.
delete from ai.agent_jobs where queue in ('scale-filler', 'scale');
delete from ai.agent_sessions where thread_id like 'scale-%';
delete from ai_archive.agent_sessions where thread_id like 'scale-%';
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'bq-' || (i % 10000), 'bench_worker', 'scale-filler', now() + interval '10 years', now(), now()
from generate_series(1, :n) i;
-- the archive's twin: 1,000 archived sessions holding :n jobs
insert into ai_archive.agent_sessions (thread_id, owner, status, created_at, updated_at, completed_at)
select 'scale-archived-' || i, 'bench_worker', 'completed', now() - interval '2 years', now() - interval '2 years',
       now() - interval '2 years'
from generate_series(1, 1000) i;
insert into ai_archive.agent_jobs (job_id, thread_id, owner, queue, status, run_at, attempts, finished_at,
                                   created_at, updated_at, result)
select -i, 'scale-archived-' || (i % 1000 + 1), 'bench_worker', 'scale-filler', 'COMPLETED', now() - interval '2 years',
       1, now() - interval '2 years', now() - interval '2 years', now() - interval '2 years', '{}'
from generate_series(1, :n) i;
-- :k finished sessions, two finished jobs each
set session_replication_role = replica;
insert into ai.agent_sessions (thread_id, owner, status, created_at, updated_at, completed_at)
select 'scale-' || i, 'bench_worker', 'completed', now() - interval '366 days', now() - interval '365 days',
       now() - interval '365 days'
from generate_series(1, :k) i;
insert into ai.agent_jobs (thread_id, owner, queue, status, run_at, attempts, finished_at, created_at, updated_at, result)
select 'scale-' || i, 'bench_worker', 'scale', 'COMPLETED', now() - interval '366 days', 1, now() - interval '365 days',
       now() - interval '366 days', now() - interval '365 days', '{}'
from generate_series(1, :k) i, generate_series(1, 2) k;
reset session_replication_role;
vacuum analyze ai.agent_jobs;
vacuum analyze ai_archive.agent_jobs;
analyze ai.agent_sessions;
analyze ai_archive.agent_sessions;
