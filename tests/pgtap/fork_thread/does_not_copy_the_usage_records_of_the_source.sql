\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
-- Usage is what the source's model calls cost: a copy would bill them twice (usage_summary per
-- owner counts every row), so a fork starts with no usage; its own calls are recorded on it.
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as t1 \gset
select ai.create_session('t-src');
select ai.record_usage('t-src', 'call-1', 'model-x', 10, 20, 0.5) is not null as u1 \gset
select pg_temp.put_ckpt('t-src', 'c1', null);
select set_config('ai.frozen_now', '2030-01-01 00:00:02+00', true) is not null as t2 \gset

select ai.fork_thread('t-src', 'c1', 't-fork') is not null as forked \gset
select is((select array_agg(thread_id order by thread_id)
           from ai.usage_summary('2030-01-01', '2030-01-02', array['thread'])),
          array['t-src'], 'usage_summary per thread: the source''s call only');
select is((select sum(cost) from ai.usage_summary('2030-01-01', '2030-01-02', array['owner'])), 0.5::numeric,
          'the owner is billed once');

select * from finish();
rollback;
