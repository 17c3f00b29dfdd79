\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;

select ai.put_checkpoint('t-blob', '', 'c1', null, 'test', '\x01', '{}', '{"messages": "v1", "memo": "v1"}', channel_values => row(array['messages', 'memo'], array['v1', 'v1'], array['msgpack', 'msgpack'], array['\xaa', '\xbb']::bytea[], null)::ai.checkpoint_values);
-- the next step changes only messages: one new blob, memo stays at v1
select ai.put_checkpoint('t-blob', '', 'c2', 'c1', 'test', '\x01', '{}', '{"messages": "v2", "memo": "v1"}', channel_values => row(array['messages'], array['v2'], array['msgpack'], array['\xcc']::bytea[], null)::ai.checkpoint_values);
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoint_blobs where thread_id = 't-blob'), 3, 'three values for two checkpoints');
set local role tenant_a;
select set_eq($$select u.c, u.b from ai.get_checkpoint('t-blob', '', 'c2') g cross join unnest(g.blob_channels, g.blobs) u(c, b)$$,
              $$values ('messages', '\xcc'::bytea), ('memo', '\xbb'::bytea)$$,
              'the second checkpoint reads the new messages and the unchanged memo');
select set_eq($$select u.c, u.b from ai.get_checkpoint('t-blob', '', 'c1') g cross join unnest(g.blob_channels, g.blobs) u(c, b)$$,
              $$values ('messages', '\xaa'::bytea), ('memo', '\xbb'::bytea)$$,
              'the first still reads its own values');

select * from finish();
rollback;
