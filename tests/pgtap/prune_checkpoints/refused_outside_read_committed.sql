\ir ../fixtures/helpers.sql
-- A deleting function in a repeatable read or serializable transaction would delete with the
-- snapshot of the transaction's first statement, blind to the versions that runs committed while
-- it waited extend: refused with AS062 before anything is deleted (issue 34 item 2).
begin isolation level repeatable read;
select plan(4);
set local role tenant_a;
select ai.put_checkpoint('t-rr', '', 'c1', null, 'test', '\x01', '{"run_id": "r1"}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);

select throws_ok($$select ai.prune_checkpoints(array['t-rr'], 'delete')$$, 'AS062', null, 'prune delete at repeatable read');
select throws_ok($$select ai.prune_checkpoints(array['t-rr'], 'keep_latest')$$, 'AS062', null, 'prune keep_latest at repeatable read');
select throws_ok($$select ai.delete_for_runs(array['r1'])$$, 'AS062', null, 'delete_for_runs at repeatable read');
select is(array(select checkpoint_id from ai.list_checkpoints('t-rr', '')), array['c1'], 'nothing was deleted');

select * from finish();
rollback;
