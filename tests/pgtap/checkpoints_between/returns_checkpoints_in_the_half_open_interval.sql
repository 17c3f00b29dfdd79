\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select set_config('ai.frozen_now', '2026-01-01 10:00:00+00', true);
select pg_temp.put_ckpt('t-time', 'c1', null);
select set_config('ai.frozen_now', '2026-01-01 11:00:00+00', true);
select pg_temp.put_ckpt('t-time', 'c2', 'c1');
select pg_temp.put_ckpt('t-time', 's1', null, 'child:1');
select set_config('ai.frozen_now', '2026-01-01 12:00:00+00', true);
select pg_temp.put_ckpt('t-time', 'c3', 'c2');

select is(array(select checkpoint_id from ai.checkpoints_between('t-time', '2026-01-01 11:00:00+00', '2026-01-01 12:00:00+00')),
          array['c2', 's1'], '[11:00, 12:00): both namespaces, not the one at 12:00');
select is((select count(*)::int from ai.checkpoints_between('t-time', '2026-01-01 00:00:00+00', '2026-01-02 00:00:00+00')), 4,
          'the whole day');

select * from finish();
rollback;
