\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;

select throws_ok($$select ai.prune_checkpoints(array['t'], 'keep_some')$$, 'AS002', null, 'unknown strategy');
select throws_ok($$select ai.prune_checkpoints(null)$$, 'AS002', null, 'NULL thread_ids');
select is(ai.prune_checkpoints(array[]::text[]), 0, 'an empty list prunes nothing');

select * from finish();
rollback;
