\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/trajectory.sql

select is((ai.record_eval_run('tr', 'model-b', true, '{"tools": 1.0}', '{}', 'tr-fork', 'ckpt-1')).owner, 'tenant_a',
          'the run belongs to the thread''s owner');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (candidate, passed, scores, replay_thread_id, from_checkpoint_id)::text from ai.eval_runs where thread_id = 'tr'),
          '(model-b,t,"{""tools"": 1.0}",tr-fork,ckpt-1)', 'with what ran and how it scored');
set local role tenant_a;
select ai.record_eval_run('tr', 'model-c', false);
select results_eq($$select candidate from ai.get_eval_runs('tr')$$, array['model-c', 'model-b'], 'get_eval_runs lists newest first');
select results_eq($$select candidate from ai.get_eval_runs(candidate => 'model-b')$$, array['model-b'], 'and filters by candidate');

select * from finish();
rollback;
