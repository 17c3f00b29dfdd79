\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('usage-done') is not null as created \gset
select ai.record_usage('usage-done', 'k' || i, 'm', i, i, i * 0.01) from generate_series(1, 2) i;
select ai.set_session_status('usage-done', 'completed') is not null as completed \gset
reset role;
create temp table before_archive as select row(u.*)::text as r from ai.usage_records u where thread_id = 'usage-done';

set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select count(*)::int from ai_archive.usage_records where thread_id = 'usage-done'), 2,
          'the usage records moved to the archive with their session');
set local role app_service;
select (ai.restore_session('usage-done')).status;
reset role;
select is((select count(*)::int from ai_archive.usage_records where thread_id = 'usage-done'), 0, 'and left it');
select set_eq($$select row(u.*)::text from ai.usage_records u where thread_id = 'usage-done'$$,
              $$select r from before_archive$$, 'restore brings them back byte for byte');

select * from finish();
rollback;
