\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', '"first"');
select throws_ok($$select ai.append_message_idempotent('t-m', 'tool_result', jsonb_build_object('x', repeat('a', 1100000)))$$, 'AS003',
  format('content is %s bytes, over the limit of 1048576', pg_column_size(jsonb_build_object('x', repeat('a', 1100000)))),
  'content over 1 MiB');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-m'), 1, 'no message written');
set local role tenant_a;
select is((ai.get_session('t-m')).last_seq, 1::bigint, 'last_seq unchanged');
select lives_ok($$select ai.append_message_idempotent('t-m', 'tool_result', jsonb_build_object('x', repeat('a', 1000000)))$$,
  'content under 1 MiB is fine');

select * from finish();
rollback;
