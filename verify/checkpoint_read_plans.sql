-- Verify agent-state:checkpoint_read_plans on pg
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_proc
            where oid in ('ai.get_checkpoint(text, text, text)'::regprocedure,
                          'ai.list_checkpoints(text, text, text, integer, jsonb)'::regprocedure,
                          'ai._list_checkpoints_any(text, text, text, integer, jsonb)'::regprocedure)
              and 'enable_seqscan=off' = any (proconfig));
