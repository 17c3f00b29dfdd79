-- Verify agent-state:renew_leases on pg
-- The function exists, only ai_service may call it.
select 1 / (pg_catalog.has_function_privilege('ai_service', 'ai.renew_leases(text, bigint[], bigint[], interval)', 'execute')
            and not pg_catalog.has_function_privilege('ai_user', 'ai.renew_leases(text, bigint[], bigint[], interval)', 'execute'))::integer;
