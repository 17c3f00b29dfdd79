\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', '"a"', 1, 'k');
select (ai.get_session('t-m')).updated_at as updated_before \gset

select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"b"', 1, 'k')$$, 'AS005',
  'idempotency key k of thread t-m was used for a different message (seq 1)', 'different content');
select throws_ok($$select ai.append_message_idempotent('t-m', 'assistant', '"a"', 1, 'k')$$, 'AS005',
  'idempotency key k of thread t-m was used for a different message (seq 1)', 'different role');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"a"', 2, 'k')$$, 'AS005',
  'idempotency key k of thread t-m was used for a different message (seq 1)', 'different turn');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"a"', null, 'k')$$, 'AS005',
  'idempotency key k of thread t-m was used for a different message (seq 1)', 'NULL turn against turn 1');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-m'), 1, 'still one message');
set local role tenant_a;
select is((ai.get_session('t-m')).last_seq, 1::bigint, 'last_seq unchanged');

select * from finish();
rollback;
