-- Verify agent-state:queue_workers_registry on pg

select worker_id, queue, client_addr, started_at, stopped_at, seen_at from ai.queue_workers where false;
