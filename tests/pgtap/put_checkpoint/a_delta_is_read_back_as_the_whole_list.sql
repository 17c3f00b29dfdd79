\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;

-- msgpack: [1, 2] then the items [3] and [4, 5] appended
select pg_temp.put_list('t-delta', 'c1', null, 'v1', '\x920102');
select pg_temp.put_list('t-delta', 'c2', 'c1', 'v2', '\x9103', 'v1');
select pg_temp.put_list('t-delta', 'c3', 'c2', 'v3', '\x920405', 'v2');
select is(pg_temp.list_value('t-delta', 'c1'), '\x920102'::bytea, 'a whole value reads as stored');
select is(pg_temp.list_value('t-delta', 'c3'), '\x950102030405'::bytea, 'a delta reads as the whole list');
select is((select blob_channels from ai.list_checkpoints('t-delta', '', null, 1)), array['m'], 'list_checkpoints names it');
select is((select blobs[1] from ai.list_checkpoints('t-delta', '', null, 1)), '\x950102030405'::bytea,
          'and returns it whole too');

select * from finish();
rollback;
