\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('items-done') is not null as created \gset
select ai.append_message_idempotent('items-done', 'user', to_jsonb(i)) from generate_series(1, 3) i;
select ai.hide_last_message('items-done') is not null as popped \gset
select ai.set_session_status('items-done', 'completed') is not null as completed \gset

set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select count(*)::int from ai_archive.hidden_messages where thread_id = 'items-done'), 1,
          'the hidden mark moved to the archive with its session');
set local role app_service;
select (ai.restore_session('items-done')).status;
reset role;
select is((select count(*)::int from ai_archive.hidden_messages where thread_id = 'items-done'), 0, 'and left it');
set local role tenant_a;
select results_eq($$select seq from ai.visible_messages('items-done')$$, array[1, 2]::bigint[],
                  'after restore the popped message is still hidden');

select * from finish();
rollback;
