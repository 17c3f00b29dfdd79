\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

-- tenant_a: 100 due jobs, 40 of them claimed
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 109) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 109) n),
                                              array(select '{}'::jsonb from generate_series(10, 109) n)) \gset
set local role app_service;
select count(*) as first from ai.claim_jobs('w', '1 minute', 'default', 40) \gset
-- tenant_b, a tenant that sees none of tenant_a's jobs, enqueues 20: they are placed where the
-- claims have got to (the queue's clock), not at the start of the order by its own jobs alone
set local role tenant_b;
select count(ai.create_session('qb' || n)) as made from generate_series(10, 29) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qb' || n from generate_series(10, 29) n),
                                              array(select '{}'::jsonb from generate_series(10, 29) n)) \gset
set local role app_service;
create temp table taken as select owner from ai.claim_jobs('w', '1 minute', 'default', 20);
select cmp_ok((select count(*)::int from taken where owner = 'tenant_a'), '>=', 6, 'tenant_a keeps about half the next claims');
select cmp_ok((select count(*)::int from taken where owner = 'tenant_b'), '>=', 6, 'tenant_b gets about half');

select * from finish();
rollback;
