\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/retention.sql
-- done-a (tenant_a, completed), done-b (tenant_b, failed), fresh-a (tenant_a, completed),
-- live-a (tenant_a, active); created at the same instant, so the thread id breaks the tie.
set local ai.frozen_now = '2030-05-01 00:00:00+00';
set local role tenant_b;
select ai.create_session('new-b') is not null as created \gset

set local role app_service;
select results_eq($$select thread_id from ai.list_sessions() where thread_id ~ '^(done|fresh|live|new)-'$$,
                  $$values ('new-b'), ('live-a'), ('fresh-a'), ('done-b'), ('done-a')$$,
                  'a service lists every owner''s sessions, newest first');
select results_eq($$select thread_id from ai.list_sessions(status => 'completed') where thread_id ~ '^(done|fresh|live|new)-'$$,
                  $$values ('fresh-a'), ('done-a')$$, 'of one status');
select results_eq($$select thread_id from ai.list_sessions(owner => 'tenant_b') where thread_id ~ '^(done|fresh|live|new)-'$$,
                  $$values ('new-b'), ('done-b')$$, 'of one owner');
select results_eq($$select thread_id from ai.list_sessions(status => 'failed', owner => 'tenant_b')$$,
                  $$values ('done-b')$$, 'of one status and one owner');
select is((select count(*) from ai.list_sessions(max_rows => 2)), 2::bigint, 'at most max_rows');

select * from finish();
rollback;
