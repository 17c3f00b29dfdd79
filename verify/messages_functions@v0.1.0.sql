-- Verify agent-state:messages_functions on pg

begin;

select 'ai._guard_message_seq()'::regprocedure;
select 'ai._guard_last_seq()'::regprocedure;
select 'ai.estimate_tokens(jsonb)'::regprocedure;
select 'ai.message_key(text, text, jsonb, integer)'::regprocedure;
select 'ai.append_message_idempotent(text, text, jsonb, integer, text, integer)'::regprocedure;
select 'ai.get_messages(text, bigint, integer)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'session_messages_seq' and tgrelid = 'ai.session_messages'::regclass;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'agent_sessions_last_seq' and tgrelid = 'ai.agent_sessions'::regclass;

rollback;
