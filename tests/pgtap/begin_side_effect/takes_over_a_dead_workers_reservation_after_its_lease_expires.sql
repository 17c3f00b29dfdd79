\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', :job, :token);
-- w1 dies; while its lease runs, nobody may take the key
select is((select outcome from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}')), 'busy', 'busy before the lease expires');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select results_eq(format($$select outcome, attempt, taken_over from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', %s, %s)$$, :job, :token2),
                  $$values ('execute', 2, true)$$, 'the new claim takes over, and is told so');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (fencing_token, takeovers)::text from ai.side_effects where idempotency_key = 'k1'), format('(%s,1)', :token2),
          'the reservation now names the new token and counts the takeover');
select is((select payload from ai.session_events where thread_id = 'qa1' and kind = 'side_effect_takeover'),
          jsonb_build_object('idempotency_key', 'k1', 'attempt', 2, 'job_id', :job), 'a side_effect_takeover event records it');
set local role app_service;
-- the taker asking again (a retried call) still sees that it took over
select results_eq(format($$select outcome, attempt, taken_over from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', %s, %s)$$, :job, :token2),
                  $$values ('execute', 2, true)$$, 'a repeated begin by the taker gives the same answer');
-- a jobless reservation dies at reserved_until
select outcome from ai.begin_side_effect('qa1', 'k2', '{}', reservation => '30 seconds');
select set_config('ai.frozen_now', '2030-01-01 00:01:30+00', true) is not null as moved \gset
select results_eq($$select outcome, attempt, taken_over from ai.begin_side_effect('qa1', 'k2', '{}')$$,
                  $$values ('execute', 2, true)$$, 'a jobless reservation is taken over after reserved_until');
select * from finish();
rollback;
