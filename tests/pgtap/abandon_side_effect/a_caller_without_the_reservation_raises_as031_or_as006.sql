\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select status from ai.finish_side_effect('qa1', 'k1', '{}', :job, :token);
select throws_ok(format($$select ai.abandon_side_effect('qa1', 'k1', %s, %s)$$, :job, :token), 'AS031',
                 'side effect k1 of thread qa1 is not reserved by the caller', 'a finished key cannot be abandoned');
select throws_ok(format($$select ai.abandon_side_effect('qa1', 'nope', %s, %s)$$, :job, :token), 'AS001',
                 'side effect nope of thread qa1 not found', 'unknown key');
select outcome from ai.begin_side_effect('qa1', 'k2', '{}', :job, :token);
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format($$select ai.abandon_side_effect('qa1', 'k2', %s, %s)$$, :job, :token), 'AS006',
                 format('job %s: lease lost', :job), 'a worker that lost the job cannot abandon');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.side_effects where idempotency_key = 'k2'), 'reserved', 'it stays reserved, for a takeover');
set local role app_service;
select * from finish();
rollback;
