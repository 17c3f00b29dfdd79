\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ai.create_session('t-other');
select ai.append_message_idempotent('t-m', 'system', '"be brief"');
select ai.append_message_idempotent('t-other', 'user', '"noise"');
select ai.append_message_idempotent('t-m', 'user', '"hi"');
select ai.append_message_idempotent('t-m', 'assistant', '"hello"');

select results_eq($$select seq, role, content from ai.get_messages('t-m')$$,
  $$values (1::bigint, 'system', '"be brief"'::jsonb), (2, 'user', '"hi"'), (3, 'assistant', '"hello"')$$,
  'the thread''s messages in seq order, no other thread''s');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq($$select * from ai.get_messages('t-m')$$,
  $$select * from ai.session_messages where thread_id = 't-m' order by seq$$, 'whole rows');
set local role tenant_a;

select * from finish();
rollback;
