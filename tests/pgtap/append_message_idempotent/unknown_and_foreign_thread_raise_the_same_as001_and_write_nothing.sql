\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-a');
select ai.append_message_idempotent('t-a', 'user', '"mine"', 1, 'k');
set local role tenant_b;
select throws_ok($$select ai.append_message_idempotent('t-nope', 'user', '"x"')$$, 'AS001', 'thread t-nope not found', 'unknown thread');
select throws_ok($$select ai.append_message_idempotent('t-a', 'user', '"x"')$$, 'AS001', 'thread t-a not found',
                 'another tenant''s thread looks unknown');
select throws_ok($$select ai.append_message_idempotent('t-a', 'user', '"mine"', 1, 'k')$$, 'AS001', 'thread t-a not found',
                 'even a retry of tenant_a''s own message does not reveal it');
reset role;
select is((select count(*)::int from ai.session_messages where thread_id = 't-a'), 1, 'tenant_a''s thread has one message');
select is((select max(seq) from ai.session_messages where thread_id = 't-a'), 1::bigint, 'no message added');

select * from finish();
rollback;
