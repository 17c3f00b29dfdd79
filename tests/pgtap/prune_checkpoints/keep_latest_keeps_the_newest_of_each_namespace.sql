\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(5);
set local role tenant_a;
select ai.put_checkpoint('t-pr', '', 'c1', null, 'test', '\x01', '{}', '{"m": "1", "n": "1"}', channel_values => row(array['m', 'n'], array['1', '1'], array['t', 't'], array['\xaa', '\xab']::bytea[], null)::ai.checkpoint_values);
select ai.put_checkpoint('t-pr', '', 'c2', 'c1', 'test', '\x01', '{}', '{"m": "2", "n": "1"}', channel_values => row(array['m'], array['2'], array['t'], array['\xbb']::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-pr', '', 'c2', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);
select ai.put_writes('t-pr', '', 'c1', 'task', array[0], array['m'], array['t'], array['\x01']::bytea[]);
select pg_temp.chain('t-pr', 3, 's', 'child:1');
select pg_temp.put_ckpt('t-other', 'o1', null);
select pg_temp.put_ckpt('t-other', 'o2', 'o1');

select is(ai.prune_checkpoints(array['t-pr'], 'keep_latest'), 3, 'c1, s1 and s2 go');
select set_eq($$select checkpoint_ns, checkpoint_id, parent_checkpoint_id from ai.list_checkpoints('t-pr')$$,
              $$values ('', 'c2', null::text), ('child:1', 's000003', null)$$, 'the newest of each namespace stays, as a root');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select set_eq($$select channel, version from ai.checkpoint_blobs where thread_id = 't-pr'$$,
              $$values ('m', '2'), ('n', '1')$$, 'the values it names stay (also the one first written for c1)');
set local role tenant_a;
select is((select write_blobs from ai.get_checkpoint('t-pr')), array['\x02']::bytea[], 'its writes stay, c1''s go');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-other'), 2, 'other threads are untouched');
set local role tenant_a;

select * from finish();
rollback;
