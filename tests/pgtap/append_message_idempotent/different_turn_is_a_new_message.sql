\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-m');
select is((ai.append_message_idempotent('t-m', 'user', '"continue"', 1)).seq, 1::bigint, 'turn 1');
select is((ai.append_message_idempotent('t-m', 'user', '"continue"', 2)).inserted, true, 'same content in turn 2 is new');
select is((ai.append_message_idempotent('t-m', 'user', '"continue"')).inserted, true, 'and with no turn it is new again');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-m'), 3, 'three messages');
set local role tenant_a;

select * from finish();
rollback;
