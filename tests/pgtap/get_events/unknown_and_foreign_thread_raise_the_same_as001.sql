\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-a');
set local role tenant_b;
select throws_ok($$select * from ai.get_events('t-nope')$$, 'AS001', 'thread t-nope not found', 'unknown thread');
select throws_ok($$select * from ai.get_events('t-a')$$, 'AS001', 'thread t-a not found', 'another tenant''s thread looks unknown');

select * from finish();
rollback;
