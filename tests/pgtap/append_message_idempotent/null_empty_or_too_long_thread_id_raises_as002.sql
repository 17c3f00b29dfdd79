\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.append_message_idempotent(null, 'user', '"x"')$$, 'AS002', 'thread_id must not be NULL', 'NULL thread_id');
select throws_ok($$select ai.append_message_idempotent('', 'user', '"x"')$$, 'AS002', 'thread_id must not be empty', 'empty thread_id');
select throws_ok(format('select ai.append_message_idempotent(%L, %L, %L)', repeat('t', 256), 'user', '"x"'), 'AS002',
                 'thread_id is longer than 255 characters', 'too long');

select * from finish();
rollback;
