\ir ../fixtures/helpers.sql
begin;
select plan(1);

set local role tenant_a;
select ai.create_session('t-ev');
select throws_ok($$select * from ai.get_events('t-ev', null)$$, 'AS002', 'after_event_id must be 0 or more, not NULL', 'NULL after_event_id');

select * from finish();
rollback;
