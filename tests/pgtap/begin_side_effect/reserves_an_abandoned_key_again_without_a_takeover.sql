\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select status from ai.abandon_side_effect('qa1', 'k1', :job, :token, 'card declined');
select results_eq(format($$select outcome, attempt, taken_over from ai.begin_side_effect('qa1', 'k1', '{}', %s, %s)$$, :job, :token),
                  $$values ('execute', 2, false)$$, 'an abandoned key is reserved again, attempt 2, not a takeover');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, takeovers)::text from ai.side_effects where idempotency_key = 'k1'), '(reserved,0)', 'reserved, no takeover counted');
set local role app_service;
select * from finish();
rollback;
