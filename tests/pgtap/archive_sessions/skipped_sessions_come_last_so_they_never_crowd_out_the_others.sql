\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');  -- done-a and done-b

-- done-a again, hot and archived (a duplicate made before ids were reserved), the oldest finished
-- session; fresh-a finished later.
reset role;
delete from ai_archive.archived_thread_ids where thread_id = 'done-a';
set local ai.frozen_now = '2030-01-02 00:00:00+00';
set local role tenant_a;
select ai.create_session('done-a');
select ai.set_session_status('done-a', 'completed');
reset role;
insert into ai_archive.archived_thread_ids values ('done-a');
set local ai.frozen_now = '2030-04-11 00:00:00+00';

set local role app_service;
set local client_min_messages = error;
select is_empty($$select thread_id from ai.archive_sessions('0 seconds', 1)$$,
                'a batch of one that meets only the duplicate moves nothing');
select results_eq($$select thread_id from ai.archive_sessions('0 seconds', 1)$$, array['fresh-a'],
                  'the next batch of one passes the listed session by');
select is_empty($$select thread_id from ai.archive_sessions('0 seconds', 1)$$,
                'and a batch that moves nothing means nothing else is left to move');

select * from finish();
rollback;
