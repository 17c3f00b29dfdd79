\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

-- Postgres 14+ built with LZ4: the columns use it, and a value written through put_checkpoint is
-- stored with it (on other servers the change does nothing; the test says so and passes).
select case when current_setting('server_version_num')::integer >= 140000
             and exists (select from pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals))
       then set_eq($$select attrelid::regclass || '.' || attname from pg_attribute
                     where (attrelid, attname) in (('ai.checkpoints'::regclass, 'checkpoint'),
                                                   ('ai.checkpoint_blobs'::regclass, 'blob'),
                                                   ('ai.checkpoint_writes'::regclass, 'blob'))
                       and attcompression = 'l'$$,
                   array['ai.checkpoints.checkpoint', 'ai.checkpoint_blobs.blob', 'ai.checkpoint_writes.blob'],
                   'the checkpoint, value and write columns compress with lz4')
       else skip('no lz4 column compression on this server', 1) end;

set local role tenant_a;
select ai.put_checkpoint('t-lz4', '', 'c1', null, 'msgpack', '\x00', '{}', '{"messages": "1"}',
                         array['messages'], array['1'], array['msgpack'],
                         array[convert_to(repeat('the agent called the search tool and read the result. ', 200), 'UTF8')]);
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select case when current_setting('server_version_num')::integer >= 140000
             and exists (select from pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals))
       then is((select pg_column_compression(blob) from ai.checkpoint_blobs where thread_id = 't-lz4'), 'lz4',
               'a large channel value is stored compressed with lz4')
       else skip('no lz4 column compression on this server', 1) end;
set local role tenant_a;

select * from finish();
rollback;
