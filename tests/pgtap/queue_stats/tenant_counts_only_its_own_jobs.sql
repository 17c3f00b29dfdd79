\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1') is not null as q \gset
set local role tenant_b;
select count(ai.enqueue_job('qb1')) from generate_series(1, 3) \gset
select is((select pending from ai.queue_stats('default')), 3::bigint, 'tenant_b counts its three');
set local role tenant_a;
select is((select pending from ai.queue_stats('default')), 1::bigint, 'tenant_a its one');
set local role app_service;
select is((select pending from ai.queue_stats('default')), 4::bigint, 'the service all four');

select * from finish();
rollback;
