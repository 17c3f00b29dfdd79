\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- seq 1..n without gaps must hold for the table, not only for ai.append_message_idempotent. A
-- tenant holds no table privilege (42501); the table-level guards still refuse such writes by
-- the schema owner (see the owner's raw writes in set_session_status).
set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', '"one"');
select throws_ok($$insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key)
                   values ('t-m', 7, 'tenant_a', 'user', '"gap"', 1, 'raw')$$,
                 null::char(5), null, 'a raw INSERT with a seq other than last_seq + 1 is refused');
select throws_ok($$update ai.agent_sessions set last_seq = 0 where thread_id = 't-m'$$,
                 null::char(5), null, 'a raw UPDATE cannot rewind last_seq');
select lives_ok($$select ai.append_message_idempotent('t-m', 'user', '"two"')$$, 'the next append still works');
reset role;
select results_eq($$select seq from ai.session_messages where thread_id = 't-m' order by seq$$,
                  array[1, 2]::bigint[], 'seq is still 1..n');

select * from finish();
rollback;
