\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:00:10+00', true) is not null as moved \gset
create temp table c on commit drop as select * from ai.complete_job(:id, :token, '{"answer": 42}');
select is(status, 'COMPLETED', 'COMPLETED') from c;
select is(result, '{"answer": 42}'::jsonb, 'with its result') from c;
select is((lease_owner, lease_expires_at, finished_at), (null::text, null::timestamptz, '2030-01-01 00:00:10+00'::timestamptz), 'no lease, finished now') from c;
select is((attempts, fencing_token), (1, :token::bigint), 'attempts and token unchanged') from c;
select is((select count(*)::int from ai.claim_job('w2')), 0, 'a completed job is never claimed again');

select * from finish();
rollback;
