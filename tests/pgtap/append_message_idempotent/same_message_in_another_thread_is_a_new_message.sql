\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-1');
select ai.create_session('t-2');
select ai.append_message_idempotent('t-1', 'user', '"hello"', 1, 'k');
select is((ai.append_message_idempotent('t-2', 'user', '"hello"', 1, 'k')).inserted, true,
          'the same explicit key in another thread is another message');
select is((ai.append_message_idempotent('t-2', 'user', '"hello"', 1)).inserted, true,
          'the default key includes the thread');

select * from finish();
rollback;
