-- Verify agent-state:session_items_functions on pg

begin;

select 'ai._json_integer(jsonb, text)'::regprocedure;
select 'ai.append_messages(text, jsonb)'::regprocedure;
select 'ai.visible_messages(text, integer, bigint)'::regprocedure;
select 'ai.hide_last_message(text)'::regprocedure;
select 'ai.hide_messages(text)'::regprocedure;

rollback;
