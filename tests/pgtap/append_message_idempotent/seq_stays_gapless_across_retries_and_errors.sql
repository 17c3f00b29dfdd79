\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', '"a"', idempotency_key => 'k1');
select ai.append_message_idempotent('t-m', 'user', '"a"', idempotency_key => 'k1');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"other"', idempotency_key => 'k1')$$, 'AS005',
  'idempotency key k1 of thread t-m was used for a different message (seq 1)', 'conflicting retry fails');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', jsonb_build_object('x', repeat('a', 1100000)))$$, 'AS003',
  format('content is %s bytes, over the limit of 1048576', pg_column_size(jsonb_build_object('x', repeat('a', 1100000)))),
  'oversize content fails');
select ai.append_message_idempotent('t-m', 'assistant', '"b"');

reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq($$select seq from ai.session_messages where thread_id = 't-m' order by seq$$,
                  array[1, 2]::bigint[], 'seq 1, 2: retries and errors took no number');
set local role tenant_a;

select * from finish();
rollback;
