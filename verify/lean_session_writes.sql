-- Verify agent-state:lean_session_writes on pg
-- One CHECK (through a function) on each of the three tables; no BEFORE UPDATE trigger on sessions.
select 'ai._check_session_row(text, text, jsonb, bigint, timestamptz)'::regprocedure,
       'ai._check_message_row(bigint, text, integer, text)'::regprocedure,
       'ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure;
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_constraint
            where contype = 'c' and (conrelid, conname) in (('ai.agent_sessions'::regclass, 'agent_sessions_row_check'),
                                                            ('ai.session_messages'::regclass, 'session_messages_row_check'),
                                                            ('ai.checkpoints'::regclass, 'checkpoints_row_check')));
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_constraint
            where contype = 'c' and conrelid in ('ai.agent_sessions'::regclass, 'ai.session_messages'::regclass,
                                                 'ai.checkpoints'::regclass));
select 1 / (select (count(*) = 0)::integer from pg_catalog.pg_trigger
            where tgrelid = 'ai.agent_sessions'::regclass and not tgisinternal and (tgtype & 2) <> 0 and (tgtype & 16) <> 0);
