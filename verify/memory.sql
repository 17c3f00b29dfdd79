-- Verify agent-state:memory on pg
select owner, namespace, ns, key, value, created_at, updated_at, ttl, expires_at, search_text from ai.memory_items where false;
select owner, ns, key, field, embedding from ai.memory_vectors where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.memory_items'::regclass);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.memory_vectors'::regclass);
select owner, namespace, ns, key, value, created_at, updated_at, ttl, expires_at, search_text from ai_archive.memory_items where false;
select owner, ns, key, field, embedding from ai_archive.memory_vectors where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai_archive.memory_items'::regclass);
