\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- A handler met a 429 with retry_after 30 s: it snoozes the job. No attempt is spent, the history
-- says snoozed, the snoozer's token is refused, and no claim takes the job before then.
select set_config('ai.frozen_now', '2030-01-01 00:00:05+00', true) is not null as moved \gset
select is((select j.status || ' ' || j.attempts || ' ' || j.run_at from ai.snooze_job(:id, :token, '2030-01-01 00:00:35+00') j),
          'PENDING 0 ' || '2030-01-01 00:00:35+00'::timestamptz, 'PENDING, the attempt given back, due at until');
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'the snoozing handler''s later writes are refused');
select throws_ok(format('select ai.snooze_job(%s, %s, now())', :id, :token), 'AS006', null, 'and so is a second snooze');
select set_config('ai.frozen_now', '2030-01-01 00:00:34+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w2', '1 minute', 'default', 10)), 0, 'no claim takes it earlier');
select set_config('ai.frozen_now', '2030-01-01 00:00:35+00', true) is not null as moved \gset
select is((select c.attempts from ai.claim_jobs('w2', '1 minute', 'default', 10) c), 1, 'claimed at until as attempt 1 again');
select is(array(select a.outcome from ai.job_attempts(:id) a order by a.claimed_at),
          array['snoozed', 'in_progress'], 'the history records the snooze');
select throws_ok(format('select ai.snooze_job(%s, %s, null)', :id, :token + 1), 'AS002', null, 'until must be given');

select * from finish();
rollback;
