\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/trajectory.sql
select ai.record_eval_run('tr', 'model-b', true);
set local role tenant_b;
select ai.create_session('tr-b');
select ai.record_eval_run('tr-b', 'model-b', false);

select results_eq($$select thread_id from ai.get_eval_runs()$$, array['tr-b'], 'tenant_b sees only its own run');
set local role app_service;
select is((select count(*)::int from ai.get_eval_runs(candidate => 'model-b')), 2, 'the service sees both');

select * from finish();
rollback;
