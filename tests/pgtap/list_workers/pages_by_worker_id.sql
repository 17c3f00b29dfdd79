\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
set local role tenant_a;
select ai.enqueue_job('qa1'), ai.enqueue_job('qa2');
set local role tenant_b;
select ai.enqueue_job('qb1');
set local role app_service;
select ai.claim_job('w-' || i, '1 hour') from generate_series(1, 3) i;

select results_eq($$select worker from ai.list_workers(max_rows => 2) where worker like 'w-%'$$,
                  $$values ('w-1'), ('w-2')$$, 'by worker id');
select results_eq($$select worker from ai.list_workers(after_worker => 'w-2') where worker like 'w-%'$$,
                  $$values ('w-3')$$, 'the next page after the last worker');

select * from finish();
rollback;
