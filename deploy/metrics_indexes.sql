-- Deploy agent-state:metrics_indexes to pg
-- requires: queue
-- requires: side_effects
-- requires: hot_renewals
--
-- What ai.metrics (change metrics) reads besides the claim indexes, so that it reads only the
-- jobs that need a look, never the history of finished ones:
-- * agent_jobs_troubled: the jobs that had trouble or wait on something other than a worker:
--   retried or taken over (attempts > 1, or PENDING again after a failed, expired or released
--   attempt), dead (FAILED), CANCELLED, AWAITING_HUMAN. A job that runs once and completes, as
--   most do, never enters it: a claim or a completion of such a job pays only the predicate.
-- * side_effects_taken_over: the ledger rows whose reservation was taken over at least once.
-- Both are partial indexes on rows that are few in a healthy system.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create index agent_jobs_troubled on ai.agent_jobs (queue)
  where attempts > 1 or status in ('FAILED', 'CANCELLED', 'AWAITING_HUMAN')
     or (status = 'PENDING' and attempt_log <> '[]'::jsonb);
create index side_effects_taken_over on ai.side_effects (owner) where takeovers > 0;

commit;
