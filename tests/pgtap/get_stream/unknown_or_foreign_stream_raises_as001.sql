\ir ../fixtures/helpers.sql
begin;
select plan(3);

\ir ../fixtures/two_tenants.sql
set local role tenant_b;
select ai.open_stream('t-b', 's-b');
set local role tenant_a;
select throws_ok($$select ai.get_stream('t-b', 's-b')$$, 'AS001', null, 'foreign');
select throws_ok($$select * from ai.read_stream('t-b', 's-b')$$, 'AS001', null, 'foreign read');
select throws_ok($$select ai.append_stream_chunks('t-b', 's-b', 1, array['x'])$$, 'AS001', null, 'foreign write');

select * from finish();
rollback;
