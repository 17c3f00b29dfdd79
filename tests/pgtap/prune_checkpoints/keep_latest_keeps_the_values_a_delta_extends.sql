\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

select pg_temp.put_list('t-prune-delta', 'c1', null, 'v1', '\x9101');
select pg_temp.put_list('t-prune-delta', 'c2', 'c1', 'v2', '\x9102', 'v1');
select pg_temp.put_list('t-prune-delta', 'c3', 'c2', 'v3', '\x9103', 'v2');
select is(ai.prune_checkpoints(array['t-prune-delta'], 'keep_latest'), 2, 'the older checkpoints go');
select is(pg_temp.list_value('t-prune-delta', 'c3'), '\x93010203'::bytea,
          'the values the kept delta extends stay, so it reads whole');

select * from finish();
rollback;
