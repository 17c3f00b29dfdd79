\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select results_eq(format($$select outcome, attempt, taken_over from ai.begin_side_effect('qa1', 'k1', '{}', %s, %s)$$, :job, :token),
                  $$values ('execute', 1, false)$$, 'a begin repeated after a timeout gets execute, attempt 1, no takeover');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 'qa1' and kind = 'side_effect_takeover'), 0, 'and no takeover event');
set local role app_service;
select * from finish();
rollback;
