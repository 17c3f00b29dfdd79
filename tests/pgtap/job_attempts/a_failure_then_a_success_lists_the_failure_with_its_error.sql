\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select ai.fail_job(:id, :token, 'the tool timed out', '0 seconds') is not null as failed \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select ai.complete_job(:id, :token2) is not null as done \gset
select results_eq(format($$select attempt, worker, outcome, error from ai.job_attempts(%s)$$, :id),
                  $$values (1, 'w1'::text, 'failed'::text, 'the tool timed out'::text), (2, 'w2', 'completed', null)$$,
                  'the failed attempt keeps its error, the next one its outcome');
select results_eq($$select failed_attempts, expired_attempts from ai.queue_stats('default')$$,
                  $$values (1::bigint, 0::bigint)$$, 'queue_stats counts the retry');

select * from finish();
rollback;
