-- Deploy agent-state:archive_thread_indexes to pg
-- requires: queue
-- requires: retention
--
-- A session's jobs found by its thread. Archiving or deleting a session removes its jobs (the
-- foreign key cascades from ai.agent_sessions), and restore_session reads them back from
-- ai_archive.agent_jobs; neither table had an index that leads with thread_id for a finished job
-- (ai.agent_jobs has one for IN_PROGRESS jobs only, and LIKE copied that one to the twin), so each
-- session archived, deleted or restored scanned all of ai.agent_jobs or ai_archive.agent_jobs,
-- under the batch's locks: a cost that grew with the table (bench/retention.sh).
--
-- The price is on the hot path: a claim and a completion each write a new version of the job row
-- (never HOT: status is in the claim index's predicate), and this index takes an entry for each.
-- Measured (bench/retention.sh, docs/benchmarks.md): claim + complete with the index at 0.73 to
-- 0.92 of the rate without it (paired runs on a shared 2-core machine; 0.1.0's one CPU
-- measurement said a quarter), against archive and restore per session flat from 10 k to 1 M jobs
-- (1 to 3 ms and 3 to 8 ms) where without it they grew with the table (359 ms and 867 ms per
-- session at 1 M jobs). 0.1.0's comment in deploy/queue.sql ("No index on thread_id alone") told
-- the choice this change reverses.
--
-- Under a live fleet: CREATE INDEX holds SHARE on ai.agent_jobs (writers wait) while it builds,
-- so the lock is bounded here as trigger DDL is, and a large table gets the index first with
-- CREATE INDEX CONCURRENTLY (docs/operations.md, "Upgrading under a live fleet"), which this
-- script then finds and keeps.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create index if not exists agent_jobs_thread on ai.agent_jobs (thread_id);
create index if not exists agent_jobs_thread on ai_archive.agent_jobs (thread_id);

commit;
