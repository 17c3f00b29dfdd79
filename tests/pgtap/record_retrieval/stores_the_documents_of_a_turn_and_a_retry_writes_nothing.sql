\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-r');
select is((ai.record_retrieval('t-r', 1, '[{"id": "doc-1", "score": 0.9}]')).inserted, true, 'stored');
select is((ai.record_retrieval('t-r', 1, '[{"id": "doc-1", "score": 0.9}]')).inserted, false, 'the same retrieval again: a retry');
select is((ai.record_retrieval('t-r', 1, '[{"id": "doc-2"}]')).inserted, true, 'other documents for the same turn: a second retrieval');
select is((select jsonb_array_length((ai.get_turn_context('t-r', 1)).retrievals)), 2, 'two retrievals for turn 1');

select * from finish();
rollback;
