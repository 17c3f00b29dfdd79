\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/retention.sql
set local role app_service;

select results_eq($$select thread_id from ai.archive_sessions('0 days', 2)$$, array['done-a', 'done-b'],
                  'two per call, the oldest finished first');
select results_eq($$select thread_id from ai.archive_sessions('0 days', 2)$$, array['fresh-a'], 'then the next');

select * from finish();
rollback;
