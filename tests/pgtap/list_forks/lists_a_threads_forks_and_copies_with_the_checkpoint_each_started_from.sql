\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(6);
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset

set local role tenant_a;
select pg_temp.chain('lf-src', 3);
-- a fork from the second checkpoint, a replay (a fork with a replay job), a whole copy; all at one
-- instant (the frozen clock): the thread id breaks the tie
select ai.fork_thread('lf-src', 'c000002', 'lf-1-fork');
select ai.fork_thread('lf-src', 'c000001', 'lf-2-replay');
select (ai.enqueue_job('lf-2-replay', '{"graph_input": null, "replay": {"from_thread": "lf-src", "from_checkpoint": "c000001", "model": "m-x"}}', 'q')).job_id as replay_job \gset
select ai.copy_thread('lf-src', 'lf-3-copy');
select ai.fork_thread('lf-1-fork', 'c000001', 'lf-4-fork-of-fork');  -- the fork's fork, not the source's

select results_eq(
  $$ select fork_thread_id, from_checkpoint_id, replay_job_id, replay_model from ai.list_forks('lf-src') $$,
  format($$ values ('lf-1-fork'::text, 'c000002'::text, null::bigint, null::text), ('lf-2-replay', 'c000001', %s, 'm-x'),
            ('lf-3-copy', null, null, null) $$, :replay_job),
  'its forks with the checkpoint each started from, the replay with its job and model, the copy without a checkpoint');
select results_eq($$ select fork_thread_id from ai.list_forks('lf-src', max_rows => 1, after_thread_id => 'lf-1-fork') $$,
                  $$ values ('lf-2-replay'::text) $$, 'the next page after the last fork');
select results_eq($$ select fork_thread_id from ai.list_forks('lf-1-fork') $$, $$ values ('lf-4-fork-of-fork'::text) $$,
                  'a fork''s own forks');
select throws_ok($$ select * from ai.list_forks('lf-src', after_thread_id => 'lf-4-fork-of-fork') $$, 'AS001', null,
                 'a cursor that is not a fork of this thread');

set local role tenant_b;
select throws_ok($$ select * from ai.list_forks('lf-src') $$, 'AS001', null, 'another tenant''s thread is unknown');
reset role;
set local role app_service;
select is((select count(*) from ai.list_forks('lf-src'))::int, 3, 'an operator sees them');

select * from finish();
rollback;
