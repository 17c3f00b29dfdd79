\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

-- The checkpoint, value and write columns compress with pglz, which deploy/checkpoints.sql names so
-- that it holds on a server whose default is lz4 (a quarter less WAL per node step than LZ4 in the
-- capacity bench, docs/benchmarks.md), and a value written through put_checkpoint is stored with it.
select case when current_setting('server_version_num')::integer >= 140000
       then set_eq($$select attrelid::regclass || '.' || attname from pg_attribute
                     where (attrelid, attname) in (('ai.checkpoints'::regclass, 'checkpoint'),
                                                   ('ai.checkpoint_blobs'::regclass, 'blob'),
                                                   ('ai.checkpoint_writes'::regclass, 'blob'))
                       and attcompression = 'p'$$,
                   array['ai.checkpoints.checkpoint', 'ai.checkpoint_blobs.blob', 'ai.checkpoint_writes.blob'],
                   'the checkpoint, value and write columns compress with pglz')
       else skip('no column compression setting before Postgres 14', 1) end;

set local role tenant_a;
select ai.put_checkpoint('t-pglz', '', 'c1', null, 'msgpack', '\x00', '{}', '{"messages": "1"}', channel_values => row(array['messages'], array['1'], array['msgpack'], array[convert_to(repeat('the agent called the search tool and read the result. ', 200), 'UTF8')], null)::ai.checkpoint_values);
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select pg_column_compression(blob) from ai.checkpoint_blobs where thread_id = 't-pglz'), 'pglz',
          'a large channel value is stored compressed with pglz');

select * from finish();
rollback;
