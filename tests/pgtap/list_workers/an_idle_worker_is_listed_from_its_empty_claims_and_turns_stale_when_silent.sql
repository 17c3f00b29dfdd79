\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql
set local role app_service;
select count(*) from ai.claim_jobs('idle-1', '1 minute', 'q-idle', 4, 'r1');

select results_eq($$select state, queue, jobs, heard_at from ai.list_workers() where worker = 'idle-1'$$,
                  $$values ('alive', 'q-idle', 0::bigint, '2030-01-01 00:00:00+00'::timestamptz)$$,
                  'an idle worker is listed by its empty claim: alive, its queue, no jobs');
select set_config('ai.frozen_now', '2030-01-01 00:00:03+00', true) is not null as moved \gset
select count(*) from ai.claim_jobs('idle-1', '1 minute', 'q-idle', 4, 'r2');
select is((select heard_at from ai.list_workers() where worker = 'idle-1'), '2030-01-01 00:00:00+00'::timestamptz,
          'an empty claim within 5 seconds of the last one writes nothing');
select set_config('ai.frozen_now', '2030-01-01 00:00:06+00', true) is not null as moved \gset
select count(*) from ai.claim_jobs('idle-1', '1 minute', 'q-idle', 4, 'r3');
select is((select heard_at from ai.list_workers() where worker = 'idle-1'), '2030-01-01 00:00:06+00'::timestamptz,
          'an empty claim 5 seconds after the last one is heard');
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select is((select state from ai.list_workers() where worker = 'idle-1'), 'stale',
          'a worker without a liveness hold silent for stale_after (1 minute) is stale');
select is((select state from ai.list_workers(stale_after => '5 minutes') where worker = 'idle-1'), 'alive',
          'stale_after sets how long');
select count(*) from ai.claim_jobs('idle-1', '1 minute', 'q-other', 4, 'r4');
select results_eq($$select state, queue from ai.list_workers() where worker = 'idle-1'$$,
                  $$values ('alive', 'q-other')$$, 'heard from again: alive, on the queue it polls now');
select throws_ok($$select * from ai.list_workers(stale_after => '0 seconds')$$, 'AS002', null,
                 'a stale_after not above 0 raises AS002');

select * from finish();
rollback;
