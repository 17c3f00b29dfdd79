\ir ../fixtures/helpers.sql
begin;
select plan(7);

set local role tenant_a;
select ai.create_session('t-r');
select throws_ok($$select ai.record_retrieval('t-r', null, '[]')$$, 'AS002', null, 'NULL turn');
select throws_ok($$select ai.record_retrieval('t-r', 1, null)$$, 'AS002', null, 'NULL documents');
select throws_ok($$select ai.record_retrieval('t-r', 1, '{"id": 1}')$$, 'AS002', null, 'not an array');
select throws_ok($$select ai.record_retrieval('t-r', 1, '["text"]')$$, 'AS002', null, 'an element that is not an object');
select throws_ok($$select ai.record_retrieval('t-r', 1, '[]', '')$$, 'AS002', null, 'empty key');
select throws_ok($$select ai.record_retrieval('t-r', 1, jsonb_build_array(jsonb_build_object('text', repeat('x', 1100000))))$$,
                 'AS003', null, 'over 1 MiB');
reset role;
select is((select count(*)::int from ai.turn_retrievals where thread_id = 't-r'), 0, 'nothing written');

select * from finish();
rollback;
