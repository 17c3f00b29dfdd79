-- Verify agent-state:checkpoint_compression_pglz on pg
-- From Postgres 14 on, the three columns compress with pglz.
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_attribute
            where (attrelid, attname) in (('ai.checkpoints'::regclass, 'checkpoint'),
                                          ('ai.checkpoint_blobs'::regclass, 'blob'),
                                          ('ai.checkpoint_writes'::regclass, 'blob'))
              and (attcompression = 'p' or pg_catalog.current_setting('server_version_num')::integer < 140000));
