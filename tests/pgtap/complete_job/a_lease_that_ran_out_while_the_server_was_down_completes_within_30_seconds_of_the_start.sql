\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1 holds the job until 00:01. The server goes down at 00:00:30 and starts again at 00:03: the
-- lease ran out while nobody could reach the database.
select set_config('ai.frozen_server_start', '2030-01-01 00:03:00+00', true) is not null as restarted \gset
select set_config('ai.frozen_now', '2030-01-01 00:03:10+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, 'ten seconds after the start, no claim takes it');
select lives_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'its holder still passes the fence');
select is((ai.complete_job(:id, :token, '{"done": true}')).status, 'COMPLETED', 'and completes it with its token');
select is((select count(*)::int from ai.job_attempts(:id)), 1, 'in one attempt');

select * from finish();
rollback;
