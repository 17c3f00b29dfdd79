\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('hitl-done') is not null as created \gset
select (ai.enqueue_job('hitl-done', '{}', 'hitl-archive')).job_id as job \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute', 'hitl-archive')).fencing_token as token \gset
select outcome from ai.begin_side_effect('hitl-done', 'k1', '{"amount": 5}', :job, :token);
select status from ai.finish_side_effect('hitl-done', 'k1', '{"id": 1}', :job, :token);
select ai.request_human(:job, :token, 'c1', '{"send": "mail"}') is not null as asked \gset
set local role tenant_a;
select status from ai.resolve_human('hitl-done', 'c1', '{"ok": true}');
select ai.cancel_job(:job) is not null as cancelled \gset
select ai.set_session_status('hitl-done', 'completed') is not null as completed \gset
reset role;

create temp table before_archive as
  select 'x' as t, row(x.*)::text as r from ai.side_effects x where thread_id = 'hitl-done'
  union all select 'h', row(h.*)::text from ai.human_approvals h where thread_id = 'hitl-done';
grant select on before_archive to app_service;

set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select count(*)::int from ai_archive.side_effects where thread_id = 'hitl-done')
          + (select count(*)::int from ai_archive.human_approvals where thread_id = 'hitl-done'), 2,
          'the ledger row and the approval moved to the archive with their session');
select is((select count(*)::int from ai.side_effects where thread_id = 'hitl-done')
          + (select count(*)::int from ai.human_approvals where thread_id = 'hitl-done'), 0, 'and left the hot tables');
set local role app_service;
select (ai.restore_session('hitl-done')).status;
reset role;
select is((select count(*)::int from before_archive), 2, 'one ledger row, one approval');
select set_eq($$select 'x' as t, row(x.*)::text from ai.side_effects x where thread_id = 'hitl-done'
                union all select 'h', row(h.*)::text from ai.human_approvals h where thread_id = 'hitl-done'$$,
              $$select t, r from before_archive$$, 'restore brings them back byte for byte');
select * from finish();
rollback;
