\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select throws_ok(format($$select ai.record_usage('qa2', 'k', 'm', 1, 1, 0, '{}', %s, %s)$$, :id, :token), 'AS002', null,
                 'the job advances qa1, not qa2');

select * from finish();
rollback;
