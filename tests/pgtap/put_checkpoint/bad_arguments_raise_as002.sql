\ir ../fixtures/helpers.sql
begin;
select plan(10);
set local role tenant_a;

select throws_ok($$select ai.put_checkpoint(null, '', 'c1', null, 'test', '\x01')$$, 'AS002', null, 'NULL thread_id');
select throws_ok($$select ai.put_checkpoint('t', null, 'c1', null, 'test', '\x01')$$, 'AS002', null, 'NULL namespace');
select throws_ok($$select ai.put_checkpoint('t', '', '', null, 'test', '\x01')$$, 'AS002', null, 'empty checkpoint_id');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, null, '\x01')$$, 'AS002', null, 'NULL type');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', null)$$, 'AS002', null, 'NULL checkpoint');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', '\x01', '[1]')$$, 'AS002', null, 'metadata not an object');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', '\x01', '{}', '{}', channel_values => row(array['a'], array[]::text[], array['t'], array['\x01']::bytea[], null)::ai.checkpoint_values)$$,
                 'AS002', null, 'blob arrays of different lengths');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', '\x01', '{}', '{}', channel_values => row(array[null]::text[], array['1'], array['t'], array['\x01']::bytea[], null)::ai.checkpoint_values)$$,
                 'AS002', null, 'a NULL channel');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', '\x01', step_commit => row(null, null, 'later')::ai.step_commit)$$, 'AS002', null, 'unknown durability');
select throws_ok($$select ai.put_checkpoint('t', '', 'c1', null, 'test', '\x01', step_commit => row(1, null, null)::ai.step_commit)$$, 'AS002', null, 'job_id without fencing_token');

select * from finish();
rollback;
