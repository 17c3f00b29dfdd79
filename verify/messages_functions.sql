-- Verify agent-state:messages_functions on pg

begin;

select 'ai._guard_message_seq()'::regprocedure;
select 'ai.estimate_tokens(jsonb)'::regprocedure;
select 'ai.message_key(text, text, jsonb, integer)'::regprocedure;
select 'ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint)'::regprocedure;
select 'ai.get_messages(text, bigint, integer)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'session_messages_seq' and tgrelid = 'ai.session_messages'::regclass;
-- last_seq is no longer kept by appends, nor guarded
select 1 / (1 - count(*)::int) from pg_catalog.pg_trigger where tgname = 'agent_sessions_last_seq' and tgrelid = 'ai.agent_sessions'::regclass;

rollback;
