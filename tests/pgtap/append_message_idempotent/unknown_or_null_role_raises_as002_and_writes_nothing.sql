\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_message_idempotent('t-m', 'robot', '"x"')$$, 'AS002',
  'role ''robot'' is not one of system, user, assistant, tool_call, tool_result', 'unknown role');
select throws_ok($$select ai.append_message_idempotent('t-m', null, '"x"')$$, 'AS002',
  'role NULL is not one of system, user, assistant, tool_call, tool_result', 'NULL role');
select throws_ok($$select ai.append_message_idempotent('t-m', 'User', '"x"')$$, 'AS002',
  'role ''User'' is not one of system, user, assistant, tool_call, tool_result', 'role is case-sensitive');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-m'), 0, 'nothing written');
set local role tenant_a;
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'last_seq unchanged');

select * from finish();
rollback;
