\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;
select ai.create_session('ev-1');
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true);
select (ai.record_eval_run('ev-1', 'cand-' || i, true)).eval_id from generate_series(1, 4) i;
select thread_id as bt, eval_id as be from ai.get_eval_runs('ev-1', max_rows => 2) order by created_at, eval_id limit 1 \gset

select results_eq($$select candidate from ai.get_eval_runs('ev-1', max_rows => 2)$$, $$values ('cand-4'), ('cand-3')$$, 'the first page');
select results_eq(format($$select candidate from ai.get_eval_runs('ev-1', max_rows => 5, before_thread_id => %L, before_eval_id => %s)$$, :'bt', :'be'),
                  $$values ('cand-2'), ('cand-1')$$, 'the next page after the cursor');
select throws_ok($$select * from ai.get_eval_runs(before_eval_id => 1)$$, 'AS002', null, 'half a cursor');

select * from finish();
rollback;
