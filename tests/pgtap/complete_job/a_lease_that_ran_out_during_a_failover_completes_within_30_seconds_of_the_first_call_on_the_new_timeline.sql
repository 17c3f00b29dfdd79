\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1 holds the job until 00:01. The primary dies at 00:00:30; a standby started the day before is
-- promoted (timeline 2). Another worker's claim is the first call on it, at 00:03.
\ir ../fixtures/promoted.sql
select set_config('ai.frozen_now', '2030-01-01 00:03:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, 'the first claim on the new timeline leaves it');
-- w1 reconnects (to the new primary) 25 seconds later and finishes with its token.
select set_config('ai.frozen_now', '2030-01-01 00:03:25+00', true) is not null as moved \gset
select lives_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'its holder still passes the fence');
select is((ai.complete_job(:id, :token, '{"done": true}')).status, 'COMPLETED', 'and completes it with its token');
select is((select count(*)::int from ai.job_attempts(:id)), 1, 'in one attempt');

-- On the old timeline (no failover), the same lease ended: the next claim takes it at once.
select set_config('ai.frozen_timeline', '', true) is not null as not_promoted \gset
set local role tenant_a;
select (ai.enqueue_job('qa2')).job_id as id2 \gset
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:04:00+00', true) is not null as moved \gset
select (ai.claim_job('w1', '1 minute')).fencing_token as token3 \gset
select set_config('ai.frozen_now', '2030-01-01 00:05:01+00', true) is not null as moved \gset
select is((ai.claim_job('w2', '1 minute')).job_id, :id2::bigint, 'an ordinary lease that ended is taken at once');
select throws_ok(format('select ai.complete_job(%s, %s)', :id2, :token3), 'AS006', format('job %s: lease lost', :id2),
                 'and its holder is fenced out');

select * from finish();
rollback;
