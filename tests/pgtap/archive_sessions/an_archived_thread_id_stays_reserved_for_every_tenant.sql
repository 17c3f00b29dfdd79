\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');

-- done-a (tenant_a) is archived: its id is taken until restored, for its owner and for everyone else.
set local role tenant_a;
select throws_ok($$select ai.create_session('done-a')$$, 'AS005',
                 'thread done-a is archived: its id stays taken until it is restored', 'its owner cannot create it again');
select throws_ok($$select ai.put_checkpoint('done-a', '', 'c9', null, 'json', '\x7b7d', '{}', '{}')$$, 'AS005',
                 'thread done-a is archived: a write does not re-create it', 'nor write a checkpoint into it');
select throws_ok($$select ai.copy_thread('live-a', 'done-b')$$, 'AS005', null,
                 'nor copy a thread into another tenant''s archived id');
set local role tenant_b;
select throws_ok($$select ai.create_session('done-a')$$, 'AS005', 'thread id done-a is not available',
                 'another tenant cannot take it (told only that it is taken, as for a hot id)');
select throws_ok($$select ai.put_checkpoint('done-a', '', 'c9', null, 'json', '\x7b7d', '{}', '{}')$$, 'AS001',
                 'thread done-a not found', 'nor write a checkpoint into it');
reset role;
select is((select count(*) from ai.agent_sessions where thread_id = 'done-a'), 0::bigint, 'no hot session of that id was left behind');
set local role app_service;
select is((select thread_id from ai.restore_session('done-a')), 'done-a', 'and the operator''s restore goes through');

select * from finish();
rollback;
