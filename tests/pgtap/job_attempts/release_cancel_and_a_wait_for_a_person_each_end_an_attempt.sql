\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select ai.release_job(:id, :token) is not null as released \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select ai.request_human(:id, :token2, 'c1', '{"ask": "ok?"}') is not null as asked \gset
set local role tenant_a;
select ai.cancel_job(:id) is not null as cancelled \gset
select results_eq(format($$select attempt, worker, outcome from ai.job_attempts(%s)$$, :id),
                  $$values (1, 'w1'::text, 'released'::text), (1, 'w2', 'awaiting_human')$$,
                  'a release gives the attempt back (so the next is number 1 again); the wait ends the claim; the cancel of a waiting job ends no attempt');

select * from finish();
rollback;
