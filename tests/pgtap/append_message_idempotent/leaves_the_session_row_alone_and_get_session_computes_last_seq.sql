\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-m');
reset role;
select pg_catalog.pg_stat_get_xact_tuples_updated('ai.agent_sessions'::regclass) as upd0 \gset
set local role tenant_a;
set local ai.frozen_now = '2030-01-03 00:00:00+00';
select ai.append_message_idempotent('t-m', 'user', '"x"');
select ai.append_message_idempotent('t-m', 'user', '"y"');
select is((ai.get_session('t-m')).last_seq, 2::bigint, 'get_session computes last_seq: the newest seq');
select is((select last_seq from ai.list_sessions() where thread_id = 't-m'), 2::bigint, 'so does list_sessions');
select is((ai.get_session('t-m')).updated_at, '2030-01-01 00:00:00+00'::timestamptz, 'updated_at is the session row''s own');
reset role;
select is(pg_catalog.pg_stat_get_xact_tuples_updated('ai.agent_sessions'::regclass) - :upd0, 0::bigint,
          'an append writes no session row (a claim''s thread lock never meets it)');

select * from finish();
rollback;
