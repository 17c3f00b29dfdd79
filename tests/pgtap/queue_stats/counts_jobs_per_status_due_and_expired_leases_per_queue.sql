\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1', run_at => '2029-12-31 23:00') is not null as q \gset
select ai.enqueue_job('qa2', run_at => '2030-01-01 00:30') is not null as q \gset
select ai.enqueue_job('qa1', '{}', 'mail') is not null as q \gset
set local role app_service;
select ai.claim_job('w', '1 minute', 'mail') is not null as c \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select results_eq($$select queue, pending, due, in_progress, expired_leases, completed, failed, cancelled from ai.queue_stats()$$,
                  $$values ('default', 2::bigint, 1::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint),
                           ('mail', 0, 0, 1, 1, 0, 0, 0)$$, 'per queue: pending, due, running, expired leases, finished');
select is((select oldest_due_age from ai.queue_stats('default')), '01:02:00'::interval, 'the oldest due job has waited 62 minutes');
select is((select count(*)::int from ai.queue_stats('nothing')), 0, 'an unknown queue has no row');

select * from finish();
rollback;
