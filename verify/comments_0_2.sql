-- Verify agent-state:comments_0_2 on pg

begin;
-- the row check of agent_sessions: its 0.1.0 function, or the one sessions_dead_columns replaces it with
select 1 / (pg_catalog.obj_description(coalesce(pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, bigint, timestamptz)'),
                                                pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, timestamptz)')),
                                       'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_message_row(bigint, text, integer, text)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_side_effect_row(text, text, integer, integer, timestamptz)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_approval_row(text, text, jsonb, timestamptz)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai.error_codes'::regclass, 'pg_class') like '%schema owner only%')::int;

rollback;
