-- Verify agent-state:checkpoint_compression on pg
-- Where the server has LZ4 column compression, the three columns have a compression method set
-- (LZ4 by this change; the later change checkpoint_compression_pglz sets pglz again).
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_attribute
            where (attrelid, attname) in (('ai.checkpoints'::regclass, 'checkpoint'),
                                          ('ai.checkpoint_blobs'::regclass, 'blob'),
                                          ('ai.checkpoint_writes'::regclass, 'blob'))
              and (attcompression in ('l', 'p')
                   or pg_catalog.current_setting('server_version_num')::integer < 140000
                   or not exists (select from pg_catalog.pg_settings
                                  where name = 'default_toast_compression' and 'lz4' = any (enumvals))));
