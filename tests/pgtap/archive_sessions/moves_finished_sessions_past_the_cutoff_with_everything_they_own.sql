\ir ../fixtures/helpers.sql
begin;
select plan(8);
\ir ../fixtures/retention.sql
set local role app_service;

select results_eq($$select thread_id, rows_moved from ai.archive_sessions('90 days')$$,
                  $$values ('done-a'::text, '{"agent_jobs": 1, "checkpoint_blobs": 1, "checkpoint_writes": 1, "checkpoints": 1, "eval_runs": 1, "session_events": 2, "session_messages": 3}'::jsonb),
                           ('done-b', '{"session_events": 2, "session_messages": 1}'::jsonb)$$,
                  'the two sessions finished 100 days ago, with what moved per table');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id in ('done-a', 'done-b')), 0, 'gone from the hot sessions');
select is((select count(*)::int from ai.session_messages where thread_id in ('done-a', 'done-b')), 0, 'and their messages');
select is((select count(*)::int from ai_archive.session_messages where thread_id in ('done-a', 'done-b')), 4, 'which are in the archive');
select is((select count(*)::int from ai_archive.eval_runs where thread_id = 'done-a'), 1, 'eval runs too');
select is((select count(*)::int from ai_archive.agent_jobs where thread_id = 'done-a'), 1, 'and jobs');
select results_eq($$select thread_id from ai.agent_sessions where thread_id in ('fresh-a', 'live-a') order by 1$$,
                  array['fresh-a', 'live-a'], 'a recent finished session and an active one stay');
set local role app_service;
select is((select count(*)::int from ai.archive_sessions('90 days')), 0, 'a second call finds nothing more');

select * from finish();
rollback;
