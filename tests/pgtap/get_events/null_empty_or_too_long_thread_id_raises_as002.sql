\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select * from ai.get_events(null)$$, 'AS002', 'thread_id must not be NULL', 'NULL thread_id');
select throws_ok($$select * from ai.get_events('')$$, 'AS002', 'thread_id must not be empty', 'empty thread_id');
select throws_ok(format('select * from ai.get_events(%L)', repeat('t', 256)), 'AS002', 'thread_id is longer than 255 characters', 'too long');

select * from finish();
rollback;
