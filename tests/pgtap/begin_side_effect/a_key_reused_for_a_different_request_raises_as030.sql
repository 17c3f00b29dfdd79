\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', :job, :token);
select throws_ok(format($$select ai.begin_side_effect('qa1', 'k1', '{"amount": 6}', %s, %s)$$, :job, :token),
                 'AS030', 'side-effect key k1 of thread qa1 was used for a different request', 'another request under the same key');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select request from ai.side_effects where idempotency_key = 'k1'), '{"amount": 5}'::jsonb, 'the ledger is unchanged');
set local role app_service;
select * from finish();
rollback;
