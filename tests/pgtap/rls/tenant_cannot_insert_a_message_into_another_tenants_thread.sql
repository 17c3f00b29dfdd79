\ir ../fixtures/helpers.sql
begin;
select plan(4);

\ir ../fixtures/two_tenants.sql

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
