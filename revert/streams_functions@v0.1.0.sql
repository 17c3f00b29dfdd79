-- Revert agent-state:streams_functions from pg

begin;

drop function ai.read_stream(text, text, integer, integer);
drop function ai.get_stream(text, text, interval);
drop function ai.abandon_stream(text, text, bigint, bigint);
drop function ai.finish_stream(text, text, bigint, bigint);
drop function ai.append_stream_chunks(text, text, integer, text[], bigint, bigint, text);
drop function ai.open_stream(text, text, text, integer, bigint, bigint, text);
drop function ai._set_stream_durability(text);
drop function ai._lock_stream(text, text);
drop function ai._check_stream_args(text, text, bigint, bigint);
drop function ai._stream_state(ai.message_streams, interval);
drop function ai._stream_channel(text, text);

commit;
