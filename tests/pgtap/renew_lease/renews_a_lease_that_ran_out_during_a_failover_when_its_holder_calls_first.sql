\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1 holds the job until 00:01; a standby started the day before is promoted (timeline 2) and w1,
-- reconnected, is the first to call on it, at 00:03: it renews.
\ir ../fixtures/promoted.sql
select set_config('ai.frozen_now', '2030-01-01 00:03:00+00', true) is not null as moved \gset
select is(ai.renew_lease(:id, :token, '1 minute'), '2030-01-01 00:04:00+00'::timestamptz, 'its holder renews it');
-- Its lease is an ordinary one from then on.
select set_config('ai.frozen_now', '2030-01-01 00:04:01+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 1, 'which ends when it ends');
-- A timeline seen once is not new again: the first call on it is remembered.
select set_config('ai.frozen_now', '2030-01-01 00:06:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w3', '1 minute')), 1, 'and is taken again when that lease ends');

select * from finish();
rollback;
