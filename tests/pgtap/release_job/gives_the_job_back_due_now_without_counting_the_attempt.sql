\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:00:20+00', true) is not null as moved \gset
create temp table r on commit drop as select * from ai.release_job(:id, :token);
select is((status, attempts, run_at), ('PENDING'::text, 0, '2030-01-01 00:00:20+00'::timestamptz), 'PENDING, due now, the attempt given back') from r;
select is((lease_owner, lease_expires_at), (null::text, null::timestamptz), 'no lease') from r;
select is((select (attempts, fencing_token) from ai.claim_job('w2')), (1, 2::bigint), 'the next claim is attempt 1 again, under a new token');

select * from finish();
rollback;
