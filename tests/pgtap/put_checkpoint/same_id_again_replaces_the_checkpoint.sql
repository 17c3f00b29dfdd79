\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

select pg_temp.put_ckpt('t-again', 'c1', null, '', '{"step": 1}');
select pg_temp.put_ckpt('t-again', 'c1', null, '', '{"step": 2}');
select is((select count(*)::int from ai.checkpoints where thread_id = 't-again'), 1, 'still one checkpoint');
select is((select metadata from ai.checkpoints where thread_id = 't-again'), '{"step": 2}'::jsonb, 'with the new content');

select * from finish();
rollback;
