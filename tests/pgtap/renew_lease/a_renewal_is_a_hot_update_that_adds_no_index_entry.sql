\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- A heartbeat writes lease_expires_at (and the generated available_at) and updated_at, which no
-- index of ai.agent_jobs holds (deploy/hot_renewals.sql): the new row version is a heap-only tuple.
reset role;
select pg_catalog.pg_stat_get_xact_tuples_hot_updated('ai.agent_jobs'::regclass) as hot0,
       pg_catalog.pg_stat_get_xact_tuples_updated('ai.agent_jobs'::regclass) as upd0 \gset
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:00:40+00', true) is not null as moved \gset
select ai.renew_lease(:id, :token, '1 minute') is not null as renewed \gset
select count(*) as renewed from ai.renew_leases('w1', array[:id]::bigint[], array[:token]::bigint[], '1 minute') \gset
reset role;
select is(:renewed::int, 1, 'both renewals renewed');
select is(pg_catalog.pg_stat_get_xact_tuples_updated('ai.agent_jobs'::regclass) - :upd0, 2::bigint, 'two updates');
select is(pg_catalog.pg_stat_get_xact_tuples_hot_updated('ai.agent_jobs'::regclass) - :hot0, 2::bigint,
          'both are HOT: no index entry written');

select * from finish();
rollback;
