\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
-- a caller without the job (another process of the same app) meets the live claim
select results_eq($$select outcome, attempt, taken_over, holder_job_id from ai.begin_side_effect('qa1', 'k1', '{}')$$,
                  format($$values ('busy', 1, false, %s::bigint)$$, :job), 'busy while the claim holding it is alive');
-- a jobless reservation is alive until reserved_until
select outcome from ai.begin_side_effect('qa1', 'k2', '{}', reservation => '30 seconds');
select is((select outcome from ai.begin_side_effect('qa1', 'k2', '{}')), 'busy', 'busy while a jobless reservation runs');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select attempt from ai.side_effects where idempotency_key = 'k1'), 1, 'busy reserves nothing');
set local role app_service;
select * from finish();
rollback;
