\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_server_start', '2030-01-01 00:02:00+00', true) is not null as restarted \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:05+00', true) is not null as moved \gset
select results_eq(format('select job_id, lease_expires_at from ai.renew_leases(''w1'', array[%s]::bigint[], array[%s]::bigint[], ''1 minute'')', :id, :token),
                  format('values (%s::bigint, ''2030-01-01 00:03:05+00''::timestamptz)', :id),
                  'its holder renews it after the start, from now');
select set_config('ai.frozen_now', '2030-01-01 00:02:50+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, 'renewed, it holds past the grace');

select * from finish();
rollback;
