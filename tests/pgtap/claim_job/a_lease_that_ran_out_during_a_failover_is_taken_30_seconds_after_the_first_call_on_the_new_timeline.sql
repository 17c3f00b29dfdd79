\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1 holds the job until 00:01. The primary dies at 00:00:30; a standby that started long before
-- (its own start time says nothing of the outage) is promoted: a new timeline, 2, on which the
-- first call of the queue comes at 00:03. w1 never comes back.
\ir ../fixtures/promoted.sql
select set_config('ai.frozen_now', '2030-01-01 00:03:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0,
          'the first claim on the new timeline does not take a lease that ran out during the failover');
select set_config('ai.frozen_now', '2030-01-01 00:03:29+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, '29 seconds after that first call the lease holds');
select set_config('ai.frozen_now', '2030-01-01 00:03:30+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select is(:token2::bigint, :token::bigint + 1, '30 seconds after it the next claim takes it, under a new token');
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'the old holder is fenced out once another holds the job');
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'and cannot renew');
-- w2 claimed on the new timeline: its lease is an ordinary one, which the grace does not stretch.
select set_config('ai.frozen_now', '2030-01-01 00:04:31+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w3', '1 minute')), 1,
          'a lease claimed on the new timeline ends when it ends');

select * from finish();
rollback;
