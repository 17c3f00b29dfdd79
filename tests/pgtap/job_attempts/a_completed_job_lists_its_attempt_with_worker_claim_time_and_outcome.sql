\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:00:30+00', true) is not null as moved \gset
select ai.complete_job(:id, :token, '{"ok": true}') is not null as done \gset
select results_eq(
  format($$select attempt, worker, fencing_token, claimed_at, lease_expires_at, ended_at, outcome, error from ai.job_attempts(%s)$$, :id),
  format($$values (1, 'w1'::text, %s::bigint, '2030-01-01 00:00:00+00'::timestamptz, '2030-01-01 00:01:00+00'::timestamptz,
                   '2030-01-01 00:00:30+00'::timestamptz, 'completed'::text, null::text)$$, :token),
  'one attempt: the claim, the lease it had, when it ended and how');
set local role tenant_a;
select is((select count(*)::int from ai.job_attempts(:id)), 1, 'the tenant sees the attempts of its own job');

select * from finish();
rollback;
