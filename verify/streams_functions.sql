-- Verify agent-state:streams_functions on pg

begin;

select 'ai._stream_channel(text, text)'::regprocedure;
select 'ai._stream_state(ai.message_streams, interval)'::regprocedure;
select 'ai._check_stream_args(text, text)'::regprocedure;
select 'ai._lock_stream(text, text)'::regprocedure;
select 'ai._set_stream_durability(text)'::regprocedure;
select 'ai.open_stream(text, text, text, integer, bigint, bigint, text)'::regprocedure;
select 'ai.append_stream_chunks(text, text, integer, text[], bigint, bigint, text)'::regprocedure;
select 'ai.finish_stream(text, text, bigint, bigint)'::regprocedure;
select 'ai.abandon_stream(text, text, bigint, bigint)'::regprocedure;
select 'ai.get_stream(text, text, interval)'::regprocedure;
select 'ai.read_stream(text, text, integer, integer)'::regprocedure;

rollback;
