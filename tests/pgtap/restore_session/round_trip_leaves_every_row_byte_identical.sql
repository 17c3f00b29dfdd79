\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/retention.sql

create temp table before_archive as
  select 's' as t, row(s.*)::text as r from ai.agent_sessions s where thread_id = 'done-a'
  union all select 'm', row(m.*)::text from ai.session_messages m where thread_id = 'done-a'
  union all select 'e', row(e.*)::text from ai.session_events e where thread_id = 'done-a'
  union all select 'v', row(v.*)::text from ai.eval_runs v where thread_id = 'done-a'
  union all select 'j', row(j.*)::text from ai.agent_jobs j where thread_id = 'done-a'
  union all select 'c', row(c.*)::text from ai.checkpoints c where thread_id = 'done-a'
  union all select 'b', row(b.*)::text from ai.checkpoint_blobs b where thread_id = 'done-a'
  union all select 'w', row(w.*)::text from ai.checkpoint_writes w where thread_id = 'done-a';
grant select on before_archive to app_service;

set local role app_service;
select count(*) from ai.archive_sessions('90 days');
select is((ai.restore_session('done-a')).status, 'completed', 'restore returns the session');
reset role;

create temp table after_restore as
  select 's' as t, row(s.*)::text as r from ai.agent_sessions s where thread_id = 'done-a'
  union all select 'm', row(m.*)::text from ai.session_messages m where thread_id = 'done-a'
  union all select 'e', row(e.*)::text from ai.session_events e where thread_id = 'done-a'
  union all select 'v', row(v.*)::text from ai.eval_runs v where thread_id = 'done-a'
  union all select 'j', row(j.*)::text from ai.agent_jobs j where thread_id = 'done-a'
  union all select 'c', row(c.*)::text from ai.checkpoints c where thread_id = 'done-a'
  union all select 'b', row(b.*)::text from ai.checkpoint_blobs b where thread_id = 'done-a'
  union all select 'w', row(w.*)::text from ai.checkpoint_writes w where thread_id = 'done-a';

select is((select count(*)::int from before_archive), 11,
          'the session, 3 messages, 2 events, an eval run, a job, a checkpoint, a channel value and a write');
select set_eq($$select t, r from after_restore$$, $$select t, r from before_archive$$, 'every row came back byte for byte');
select is((select count(*)::int from ai_archive.agent_sessions where thread_id = 'done-a'), 0, 'and left the archive');

select * from finish();
rollback;
