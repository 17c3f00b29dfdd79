\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/trajectory.sql
select ai.create_session('quiet');
select ai.append_message_idempotent('quiet', 'user', '"hello?"');

select is((select count(*)::int from ai.trajectory('quiet') where is_final), 0, 'no assistant message: no final step');
select throws_ok($$select * from ai.trajectory('nope')$$, 'AS001', 'thread nope not found', 'unknown thread');
select throws_ok($$select * from ai.trajectory(null)$$, 'AS002', 'thread_id must not be NULL', 'NULL thread');
set local role tenant_b;
select throws_ok($$select * from ai.trajectory('tr')$$, 'AS001', 'thread tr not found', 'another tenant''s thread');

select * from finish();
rollback;
