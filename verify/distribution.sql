-- Verify agent-state:distribution on pg

select pg_catalog.has_function_privilege('ai.distribute()', 'execute');
select pg_catalog.has_function_privilege('ai._formation_caller(name)', 'execute');
select pg_catalog.has_function_privilege('ai._formation_mac(text, text)', 'execute');
select one, secret from ai.formation_secret where false;
select 1 / count(*) from ai.error_codes where sqlstate = 'AS070';
select pg_catalog.has_function_privilege('ai._formation_carry()', 'execute');
select pg_catalog.has_function_privilege('ai._formation_secret()', 'execute');
select pg_catalog.has_function_privilege('ai._fence_on_formation(text, bigint, bigint)', 'execute');
select pg_catalog.has_function_privilege('ai._thread_fence_moved()', 'execute');
select pg_catalog.has_function_privilege('ai._formation_rewrites(boolean)', 'execute');
select one from ai.formation_two_phase where false;
select 1 / count(*) from ai.error_codes where sqlstate = 'AS071';
select pg_catalog.has_function_privilege('ai._formation_two_phase()', 'execute');
select pg_catalog.has_function_privilege('ai._formation_delegated_clock()', 'execute');
select 1 / count(*) from ai.error_codes where sqlstate = 'AS072';
select pg_catalog.has_function_privilege('ai._formation_delegate(boolean)', 'execute');
select pg_catalog.has_function_privilege('ai._formation_thread_id(text)', 'execute');
select 1 / pg_catalog.cardinality(ai._formation_delegated_writes());
select pg_catalog.has_function_privilege('ai._formation_dry_run(text)', 'execute');
select pg_catalog.has_function_privilege('ai._formation_step_is_dry(text)', 'execute');
