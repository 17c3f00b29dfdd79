\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(5);
set local role tenant_a;

select pg_temp.put_ckpt('t-step', 'c1', null);
select is(ai.put_checkpoint('t-step', '', 'c2', 'c1', 'test', '\x01', '{}', '{}', channel_values => row('{}', '{}', '{}', '{}', null)::ai.checkpoint_values, writes => row('task-1', 'p', array[0, 1], array['a', 'b'], array['json', 'json'], array['\x01', '\x02']::bytea[])::ai.task_writes, messages => '[{"role": "assistant", "content": "hi", "idempotency_key": "k1"}]'),
          'c2', 'one call saves the step');
select is((select write_task_ids from ai.get_checkpoint('t-step', '', 'c1')), array['task-1', 'task-1'],
          'the held writes belong to the parent checkpoint');
select is((select array_agg(role || ':' || (content #>> '{}')) from ai.get_messages('t-step')), array['assistant:hi'],
          'the messages are appended to the thread');
select throws_ok($$select ai.put_checkpoint('t-step', '', 'c3', null, 'test', '\x01', '{}', '{}', channel_values => row('{}', '{}', '{}', '{}', null)::ai.checkpoint_values, writes => row('task-1', '', array[0], array['a'], array['json'], array['\x01']::bytea[])::ai.task_writes)$$,
                 'AS002', 'held writes (writes.task_id) belong to the parent checkpoint: parent_checkpoint_id must not be NULL',
                 'held writes need the parent they were written for');
select throws_ok($$select ai.put_checkpoint('t-step', '', 'c3', 'c2', 'test', '\x01', '{}', '{}', channel_values => row('{}', '{}', '{}', '{}', null)::ai.checkpoint_values, writes => row(null, '', array[0], null, null, null)::ai.task_writes)$$,
                 'AS002', 'held writes need a task_id', 'write arrays without a task');

select * from finish();
rollback;
