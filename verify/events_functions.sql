-- Verify agent-state:events_functions on pg

begin;

select 'ai._check_event_kind(text)'::regprocedure;
select 'ai.record_event(text, text, jsonb)'::regprocedure;
select 'ai.get_events(text, bigint, integer, text[])'::regprocedure;

rollback;
