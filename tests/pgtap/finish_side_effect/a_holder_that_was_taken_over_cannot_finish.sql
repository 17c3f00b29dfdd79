\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token2);
select throws_ok(format($$select ai.finish_side_effect('qa1', 'k1', '{"by": "w1"}', %s, %s)$$, :job, :token), 'AS006',
                 format('job %s: lease lost', :job), 'the dead worker''s finish is fenced out');
select is((select result from ai.finish_side_effect('qa1', 'k1', '{"by": "w2"}', :job, :token2)), '{"by": "w2"}'::jsonb, 'the taker finishes');
-- without a job: the old attempt no longer holds it
select attempt as att from ai.begin_side_effect('qa1', 'k2', '{}', reservation => '10 seconds') \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select outcome from ai.begin_side_effect('qa1', 'k2', '{}');
select throws_ok(format($$select ai.finish_side_effect('qa1', 'k2', '{}', null, %s)$$, :att), 'AS031',
                 'side effect k2 of thread qa1 is not reserved by the caller', 'an expired jobless holder cannot finish after a takeover');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.side_effects where idempotency_key = 'k2'), 'reserved', 'the taker still holds it');
set local role app_service;
select * from finish();
rollback;
