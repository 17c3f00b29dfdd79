\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.abandon_stream('t-s', 's1');
select throws_ok($$select ai.finish_stream('t-s', 's1')$$, 'AS051', null, 'abandoned');
select is_empty($$select * from ai.get_messages('t-s')$$, 'no message');

select * from finish();
rollback;
