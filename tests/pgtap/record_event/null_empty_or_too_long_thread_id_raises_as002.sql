\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.record_event(null, 'error')$$, 'AS002', 'thread_id must not be NULL', 'NULL thread_id');
select throws_ok($$select ai.record_event('', 'error')$$, 'AS002', 'thread_id must not be empty', 'empty thread_id');
select throws_ok(format('select ai.record_event(%L, %L)', repeat('t', 256), 'error'), 'AS002',
                 'thread_id is longer than 255 characters', 'too long');

select * from finish();
rollback;
