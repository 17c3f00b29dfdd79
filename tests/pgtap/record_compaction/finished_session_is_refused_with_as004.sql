\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/compaction.sql
select ai.set_session_status('c1', 'completed');

select throws_ok($$select ai.record_compaction('c1', 'late', 40)$$, 'AS004', 'session c1 is completed: no more messages',
                 'a finished session takes no summary');

select * from finish();
rollback;
