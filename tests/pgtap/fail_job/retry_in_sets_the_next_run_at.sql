\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select is((ai.fail_job(:id, :token, 'rate limited', '5 minutes')).run_at, '2030-01-01 00:05:00+00'::timestamptz, 'due again after retry_in');
select is((select count(*)::int from ai.claim_job('w')), 0, 'not before');
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
select is((select (attempts, fencing_token) from ai.claim_job('w')), (2, 2::bigint), 'then attempt 2');

select * from finish();
rollback;
