\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-a');
select ai.append_message_idempotent('t-a', 'user', '"from a"');
select ai.record_event('t-a', 'tool_call');
set local role tenant_b;
select ai.create_session('t-b');
select ai.append_message_idempotent('t-b', 'user', '"from b"');
select ai.record_event('t-b', 'tool_call');

-- The seq guard (a BEFORE trigger, which cannot see tenant_a's session either) or the policy
-- refuses each of these; what matters is that nothing lands in tenant_a's thread.
set local role tenant_b;
select throws_ok($$insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key)
                  values ('t-a', 2, 'tenant_a', 'user', '"forged"', 1, 'forged')$$, null::char(5), null,
                 'with owner = tenant_a it is refused');
select throws_ok($$insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key)
                  values ('t-a', 2, 'tenant_b', 'user', '"forged"', 1, 'forged')$$, null::char(5), null,
                 'with owner = tenant_b it is refused');
select throws_ok($$insert into ai.session_messages (thread_id, seq, role, content, token_count, idempotency_key)
                  values ('t-a', 2, 'user', '"forged"', 1, 'forged')$$, null::char(5), null,
                 'without an owner it is refused');
reset role;
select is((select count(*)::int from ai.session_messages where thread_id = 't-a'), 1, 'tenant_a''s thread still has one message');

select * from finish();
rollback;
