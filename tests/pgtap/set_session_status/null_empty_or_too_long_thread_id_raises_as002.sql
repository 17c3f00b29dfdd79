\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.set_session_status(null, 'completed')$$, 'AS002', 'thread_id must not be NULL', 'NULL thread_id');
select throws_ok($$select ai.set_session_status('', 'completed')$$, 'AS002', 'thread_id must not be empty', 'empty thread_id');
select throws_ok(format('select ai.set_session_status(%L, %L)', repeat('t', 256), 'completed'), 'AS002',
                 'thread_id is longer than 255 characters', 'too long');

select * from finish();
rollback;
