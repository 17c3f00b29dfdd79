\ir ../fixtures/helpers.sql
begin;
select plan(1);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.finish_stream('t-s', 's1');
select throws_ok($$select ai.abandon_stream('t-s', 's1')$$, 'AS051', null, 'finished');

select * from finish();
rollback;
