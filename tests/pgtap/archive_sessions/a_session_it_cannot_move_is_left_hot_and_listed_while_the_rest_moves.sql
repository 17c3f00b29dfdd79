\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');  -- done-a and done-b

-- A duplicate the reservation no longer allows (an id re-created before it existed): tenant_a's
-- done-a both archived and hot, finished. Then tenant_b finishes another session.
reset role;
delete from ai_archive.archived_thread_ids where thread_id = 'done-a';
set local role tenant_a;
select ai.create_session('done-a');
select ai.set_session_status('done-a', 'completed');
set local role tenant_b;
select ai.create_session('later-b');
select ai.set_session_status('later-b', 'failed');
reset role;
insert into ai_archive.archived_thread_ids values ('done-a');
set local ai.frozen_now = '2030-04-12 00:00:00+00';

set local role app_service;
set local client_min_messages = error;  -- the WARNING it raises for done-a
select results_eq($$select thread_id from ai.archive_sessions('0 seconds') order by 1$$,
                  array['fresh-a', 'later-b'], 'the sweep moves every other finished session');
select results_eq($$select thread_id, owner, sqlstate, constraint_name, attempts from ai.archive_skips()$$,
                  $$values ('done-a'::text, 'tenant_a'::text, '23505'::text, 'agent_sessions_pkey'::text, 1)$$,
                  'and lists the one it could not move, with the error');
reset role;
select is((select status from ai.agent_sessions where thread_id = 'done-a'), 'completed', 'which stays hot, untouched');
set local role app_service;
select is((select count(*) from ai.archive_sessions('0 seconds')), 0::bigint, 'a later sweep moves nothing more');
select is((select attempts from ai.archive_skips() where thread_id = 'done-a'), 2, 'having tried it again');
-- Once the duplicate is resolved (here: the hot copy deleted by its owner), the list forgets it.
set local role tenant_a;
select ai.delete_thread('done-a');
set local role app_service;
select count(*) from ai.archive_sessions('0 seconds');
select is_empty($$select * from ai.archive_skips()$$, 'a skip whose hot session is gone leaves the list');

select * from finish();
rollback;
