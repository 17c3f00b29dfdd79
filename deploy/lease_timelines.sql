-- Deploy agent-state:lease_timelines to pg
-- requires: queue
--
-- One row per timeline of the cluster (docs/queue.md, "Leases and outages"): when the queue was
-- first called on it. A lease does not end while the database is down: one renewed before the
-- server started holds for 30 seconds after the start (deploy/queue_functions.sql, "Leases and
-- database outages"). A standby promoted after its primary died is not a start: it keeps its own
-- start time, long before the failover, and Postgres records no promotion time a function may
-- read. A promotion (or a point-in-time recovery) begins a new timeline, which any role reads
-- (pg_walfile_name(pg_current_wal_lsn())), so the first lease call on a timeline writes its row
-- here, and that first call is the start the rule measures from when it comes after the server's
-- own start. The rows replicate with everything else: a standby promoted later finds the rows of
-- the timelines before it, and the first call on its own timeline writes the next.
--
-- The timeline this change is deployed on gets the row -infinity: nothing ran out on it before the
-- queue was deployed, and the server's start alone counts there. Written only by
-- ai._server_start (the schema owner, in the queue's SECURITY DEFINER functions); a few rows for
-- the life of a cluster.
begin;

create table ai.lease_timelines (
  timeline integer primary key check (timeline > 0),
  first_seen timestamptz not null
);
comment on table ai.lease_timelines is
  'Internal: per timeline of the cluster (a promotion or a point-in-time recovery begins one), when a lease call of the queue was first made on it; a lease that ran out during the failover holds for 30 seconds after that (ai._server_start).';

alter table ai.lease_timelines enable row level security;
alter table ai.lease_timelines force row level security;
-- No grant: only the queue's SECURITY DEFINER functions (the schema owner) reach it.
create policy lease_timelines_schema_owner on ai.lease_timelines using (true) with check (true);

insert into ai.lease_timelines (timeline, first_seen)
select ('x' || pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8))::bit(32)::integer,
       '-infinity'
where not pg_catalog.pg_is_in_recovery();

commit;
