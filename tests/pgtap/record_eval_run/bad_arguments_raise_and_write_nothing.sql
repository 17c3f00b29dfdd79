\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/trajectory.sql

select throws_ok($$select ai.record_eval_run('tr', null, true)$$, 'AS002', 'candidate must not be NULL', 'NULL candidate');
select throws_ok($$select ai.record_eval_run('tr', 'm', null)$$, 'AS002', 'passed must not be NULL', 'NULL passed');
select throws_ok($$select ai.record_eval_run('tr', 'm', true, '[1]')$$, 'AS002', 'scores must be a JSON object, not array', 'scores not an object');
select throws_ok($$select ai.record_eval_run('nope', 'm', true)$$, 'AS001', 'thread nope not found', 'unknown thread');
select throws_ok($$select * from ai.get_eval_runs(max_rows => 0)$$, 'AS002', 'max_rows must be between 1 and 10000, not 0', 'bad max_rows');
set local role tenant_b;
select throws_ok($$select ai.record_eval_run('tr', 'm', true)$$, 'AS001', 'thread tr not found', 'another tenant''s thread');
reset role;
select is((select count(*)::int from ai.eval_runs), 0, 'nothing was written');

select * from finish();
rollback;
