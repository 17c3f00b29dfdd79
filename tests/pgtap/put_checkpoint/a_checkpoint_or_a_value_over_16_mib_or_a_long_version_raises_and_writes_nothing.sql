\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select throws_ok($$select ai.put_checkpoint('t-big', '', 'c1', null, 'json', decode(repeat('00', 16777217), 'hex'))$$,
                 'AS003', 'checkpoint is 16777217 bytes, over the limit of 16777216', 'a checkpoint over 16 MiB');
select throws_ok($$select ai.put_checkpoint('t-big', '', 'c1', null, 'json', '\x01', '{}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['json'], array[decode(repeat('00', 16777217), 'hex')], null)::ai.checkpoint_values)$$,
                 'AS003', 'the value of channel m is 16777217 bytes, over the limit of 16777216', 'a channel value over 16 MiB');
select throws_ok(format($$select ai.put_checkpoint('t-big', '', 'c1', null, 'json', '\x01', '{}', '{}', channel_values => row(array['m'], array[%L], array['json'], array['\x01'::bytea], null)::ai.checkpoint_values)$$, repeat('v', 3000)),
                 'AS002', 'the version of channel m is longer than 255 bytes', 'a version over 255 bytes (not 54000)');
select throws_ok(format($$select ai.put_checkpoint('t-big', '', 'c1', null, 'json', '\x01', '{}', '{}', channel_values => row(array[%L], array['1'], array['json'], array['\x01'::bytea], null)::ai.checkpoint_values)$$, repeat('c', 3000)),
                 'AS002', 'a channel name is longer than 255 bytes', 'a channel name over 255 bytes');
reset role;
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-big'), 0, 'nothing written, not even the session');

select * from finish();
rollback;
