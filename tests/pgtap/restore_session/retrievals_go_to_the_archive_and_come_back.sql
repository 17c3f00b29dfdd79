\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('rag-done') is not null as created \gset
select ai.record_retrieval('rag-done', 1, '[{"id": "d1"}]') is not null as recorded \gset
select ai.set_session_status('rag-done', 'completed') is not null as completed \gset
set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select count(*)::int from ai_archive.turn_retrievals where thread_id = 'rag-done'), 1, 'archived with the session');
set local role app_service;
select (ai.restore_session('rag-done')).status;
set local role tenant_a;
select is((select jsonb_path_query_array((ai.get_turn_context('rag-done', 1)).retrievals, '$[*].documents[*].id')),
          '["d1"]'::jsonb, 'and back after restore');

select * from finish();
rollback;
