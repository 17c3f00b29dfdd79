\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-r');
select ai.record_retrieval('t-r', 1, '[{"id": "a"}]', 'search-1');
select throws_ok($$select ai.record_retrieval('t-r', 1, '[{"id": "b"}]', 'search-1')$$, 'AS005', null, 'other documents');
select throws_ok($$select ai.record_retrieval('t-r', 2, '[{"id": "a"}]', 'search-1')$$, 'AS005', null, 'another turn');

select * from finish();
rollback;
