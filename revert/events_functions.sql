-- Revert agent-state:events_functions from pg

begin;

drop function ai.get_events(text, bigint, integer, text[]);
drop function ai.record_event(text, text, jsonb);
drop function ai._check_event_kind(text);

commit;
