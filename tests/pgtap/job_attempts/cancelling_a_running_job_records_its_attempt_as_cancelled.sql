\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

set local role tenant_a;
select ai.cancel_job(:id) is not null as cancelled \gset
select results_eq(format($$select attempt, outcome from ai.job_attempts(%s)$$, :id),
                  $$values (1, 'cancelled'::text)$$, 'the running attempt ended by the cancel');

select * from finish();
rollback;
