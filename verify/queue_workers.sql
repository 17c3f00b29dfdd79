-- Verify agent-state:queue_workers on pg

select worker_id, live, request_id, job_ids, fencing_tokens, free_since, seen_at from ai.queue_workers where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.queue_workers'::regclass);
