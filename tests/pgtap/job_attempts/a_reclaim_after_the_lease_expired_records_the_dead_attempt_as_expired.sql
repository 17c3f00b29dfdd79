\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

-- w1 dies; its lease ends and w2's claim takes the job in the same transaction that records it.
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select results_eq(format($$select attempt, worker, outcome, ended_at from ai.job_attempts(%s)$$, :id),
                  $$values (1, 'w1'::text, 'expired'::text, '2030-01-01 00:02:00+00'::timestamptz),
                           (2, 'w2', 'in_progress', null)$$,
                  'the dead attempt, then the running one');
select is((select expired_attempts from ai.queue_stats('default')), 1::bigint, 'queue_stats counts the reclaim');
select is((select claimed_at from ai.get_job(:id)), '2030-01-01 00:02:00+00'::timestamptz, 'the job was claimed again then');

select * from finish();
rollback;
