\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;

select pg_temp.put_list('t-prune-delta', 'c1', null, 'v1', '\x9101');
select pg_temp.put_list('t-prune-delta', 'c2', 'c1', 'v2', '\x9102', 'v1');
select pg_temp.put_list('t-prune-delta', 'c3', 'c2', 'v3', '\x9103', 'v2');
select is(ai.prune_checkpoints(array['t-prune-delta'], 'keep_latest'), 2, 'the older checkpoints go');
select is(pg_temp.list_value('t-prune-delta', 'c3'), '\x93010203'::bytea,
          'the kept value reads whole');
reset role;
select is((select array_agg(version || coalesce(':' || base_version, '') order by version) from ai.checkpoint_blobs
           where thread_id = 't-prune-delta'), array['v3'], 'made whole: the versions it extended go with their checkpoints');
select is((select delta_depth from ai.checkpoint_blobs where thread_id = 't-prune-delta'), 0,
          'at depth 0, as a whole value is');

select * from finish();
rollback;
