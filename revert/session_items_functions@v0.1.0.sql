-- Revert agent-state:session_items_functions from pg

begin;

drop function ai.hide_messages(text);
drop function ai.hide_last_message(text);
drop function ai.visible_messages(text, integer);
drop function ai.append_messages(text, jsonb);
drop function ai._json_integer(jsonb, text);

commit;
