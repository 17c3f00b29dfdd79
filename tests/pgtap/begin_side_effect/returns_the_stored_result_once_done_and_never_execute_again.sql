\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', :job, :token);
select status from ai.finish_side_effect('qa1', 'k1', '{"charge": "ch_1"}', :job, :token);
select results_eq(format($$select outcome, result from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', %s, %s)$$, :job, :token),
                  $$values ('done', '{"charge": "ch_1"}'::jsonb)$$, 'the holder asking again gets done and the result');
-- a later claim of the job (the worker crashed after finishing) gets the same answer
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select results_eq(format($$select outcome, result from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', %s, %s)$$, :job, :token2),
                  $$values ('done', '{"charge": "ch_1"}'::jsonb)$$, 'a new claim gets done and the result too');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select attempt from ai.side_effects where idempotency_key = 'k1'), 1, 'nothing was reserved again');
set local role app_service;
select * from finish();
rollback;
