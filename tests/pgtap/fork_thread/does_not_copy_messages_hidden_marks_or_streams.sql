\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
-- The message log is the recorded reference a replay on the fork is compared with
-- (ai.trajectory): the fork starts with an empty log, and so with no hidden marks (they point at
-- messages) and no streams (a stream becomes a message of the thread that streamed it).
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as t1 \gset
select ai.create_session('t-src');
select ai.append_message_idempotent('t-src', 'user', '"hello"', 1) is not null as m1 \gset
select ai.append_message_idempotent('t-src', 'assistant', '"hi"', 1) is not null as m2 \gset
select ai.hide_last_message('t-src') is not null as hidden \gset
select ai.open_stream('t-src', 's-1') is not null as opened \gset
select pg_temp.put_ckpt('t-src', 'c1', null);

select ai.fork_thread('t-src', 'c1', 't-fork') is not null as forked \gset
select is((select count(*) from ai.get_messages('t-fork')), 0::bigint, 'no message');
select is((select count(*) from ai.visible_messages('t-fork', 100)), 0::bigint, 'no visible item either');
select throws_ok($$select ai.read_stream('t-fork', 's-1')$$, 'AS001', null, 'no stream');

select * from finish();
rollback;
