\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;
set local ai.frozen_now = '2030-01-01 00:00:00+00';
select ai.create_session('tc');
select ai.append_message_idempotent('tc', 'user', '"find a hotel"');
set local ai.frozen_now = '2030-01-01 00:00:01+00';
select ai.put_checkpoint('tc', '', 'c1', null, 'json', '\x7b7d');
set local ai.frozen_now = '2030-01-01 00:00:02+00';
select ai.append_message_idempotent('tc', 'tool_call', '{"name": "search", "arguments": {"city": "Lisbon"}}');
select ai.append_message_idempotent('tc', 'assistant', '"Alfama Inn"');

select results_eq($$select seq from ai.trajectory('tc', 'c1')$$, array[2, 3]::bigint[],
                  'only the messages written after checkpoint c1 was saved');
select throws_ok($$select * from ai.trajectory('tc', 'c9')$$, 'AS001', 'checkpoint c9 of thread tc not found', 'unknown checkpoint');
select results_eq($$select seq from ai.trajectory('tc')$$, array[1, 2, 3]::bigint[], 'without a checkpoint, everything');

select * from finish();
rollback;
