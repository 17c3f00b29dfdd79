\ir ../fixtures/helpers.sql
begin;
select plan(4);
set local role tenant_a;
select throws_ok($$select * from ai.delta_channel_history(null, '', 'c1', array['ch'])$$, 'AS002', null, 'NULL thread_id');
select throws_ok($$select * from ai.delta_channel_history('t', null, 'c1', array['ch'])$$, 'AS002', null, 'NULL namespace');
select throws_ok($$select * from ai.delta_channel_history('t', '', 'c1', null)$$, 'AS002', null, 'NULL channels');
select throws_ok($$select * from ai.delta_channel_history('t', '', 'c1', array['ch', null])$$, 'AS002', null, 'a NULL channel');
select * from finish();
rollback;
