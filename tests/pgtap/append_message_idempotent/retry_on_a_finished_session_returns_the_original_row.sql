\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'assistant', '"done"', 3);
select ai.set_session_status('t-m', 'completed');
select is((ai.append_message_idempotent('t-m', 'assistant', '"done"', 3)).seq, 1::bigint,
          'a retry of a message written before the session finished still returns it');
select is((ai.append_message_idempotent('t-m', 'assistant', '"done"', 3)).inserted, false, 'with inserted = false');

select * from finish();
rollback;
