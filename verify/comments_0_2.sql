-- Verify agent-state:comments_0_2 on pg

begin;
select 1 / (pg_catalog.obj_description('ai._check_session_row(text, text, jsonb, bigint, timestamptz)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_message_row(bigint, text, integer, text)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_side_effect_row(text, text, integer, integer, timestamptz)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai._check_approval_row(text, text, jsonb, timestamptz)'::regprocedure, 'pg_proc') like '%for every row written%')::int;
select 1 / (pg_catalog.obj_description('ai.error_codes'::regclass, 'pg_class') like '%schema owner only%')::int;

rollback;
