\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

set local role tenant_a;
select pg_temp.put_ckpt('t-row', 'c1', null);
reset role;
create temp table row_version as select ctid::text as row_ctid from ai.agent_sessions where thread_id = 't-row';
set local role tenant_a;
-- a later step of the same thread, with a message: the session row keeps its version
select ai.put_checkpoint('t-row', '', 'c2', 'c1', 'test', '\x01', '{}', '{}', channel_values => row('{}', '{}', '{}', '{}', null)::ai.checkpoint_values, messages => '[{"role": "user", "content": "x"}]');
reset role;
select is((select ctid::text from ai.agent_sessions where thread_id = 't-row'), (select row_ctid from row_version),
          'the session row is not rewritten by a put');
select is((select count(*)::int from ai.checkpoints where thread_id = 't-row'), 2, 'the put happened');

select * from finish();
rollback;
