\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(5);
set local role tenant_a;
-- d1 .. d8 with values stored at d1 and d4: d8's value is rebuilt from d4's and the writes of d4 .. d7
select pg_temp.delta_chain('t-pd', 8, array[1, 4]);
-- a thread whose newest checkpoint stores the value itself
select pg_temp.delta_chain('t-ps', 5, array[2, 5]);
select pg_temp.history('t-pd', 'd000008') as before \gset

select is(ai.prune_checkpoints(array['t-pd', 't-ps'], 'keep_latest'), 7, 'd1 .. d3 of t-pd and d1 .. d4 of t-ps go');
select is(pg_temp.history('t-pd', 'd000008'), :'before'::text[], 'd8 is rebuilt as before: seed s4, writes w4 .. w7');
select is(array(select checkpoint_id || ':' || coalesce(parent_checkpoint_id, 'root')
                from ai.list_checkpoints('t-pd', '') order by checkpoint_id),
          array['d000004:root', 'd000005:d000004', 'd000006:d000005', 'd000007:d000006', 'd000008:d000007'],
          'the chain back to the stored value stays; its oldest checkpoint becomes the root');
select is(array(select checkpoint_id from ai.list_checkpoints('t-ps', '')), array['d000005'],
          'a newest checkpoint that stores the value keeps nothing else');
select is((select blob_types from ai.get_checkpoint('t-pd', '', 'd000004')), array['test'], 'd4 keeps its stored value');

select * from finish();
rollback;
