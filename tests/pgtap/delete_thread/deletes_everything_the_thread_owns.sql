\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(6);
set local role tenant_a;
select ai.put_checkpoint('t-del', '', 'c1', null, 'test', '\x01', '{}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-del', '', 'c1', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);
select ai.append_message_idempotent('t-del', 'user', '"hi"');

select ok(ai.delete_thread('t-del'), 'true: deleted');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-del'), 0, 'the session');
select is((select count(*)::int from ai.checkpoints where thread_id = 't-del')
          + (select count(*)::int from ai.checkpoint_blobs where thread_id = 't-del')
          + (select count(*)::int from ai.checkpoint_writes where thread_id = 't-del'), 0, 'checkpoints, values and writes');
select is((select count(*)::int from ai.session_messages where thread_id = 't-del'), 0, 'messages');
select is((select owner from ai.deleted_threads where thread_id = 't-del'), 'tenant_a', 'a tombstone is left');
set local role tenant_a;
select ok(not ai.delete_thread('t-del'), 'false the second time');

select * from finish();
rollback;
