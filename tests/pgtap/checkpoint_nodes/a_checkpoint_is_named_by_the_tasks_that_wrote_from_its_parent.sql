\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('cn') is not null as created \gset
select ai.put_checkpoint('cn', '', 'c1', null, 'json', '\x7b7d', '{"step": -1, "source": "input"}') as c1 \gset
select ai.put_writes('cn', '', 'c1', 'task-start', array[0], array['branch:to:draft'], array['json'], array['\x7b7d'::bytea],
                     '~__pregel_pull, __start__') as w1 \gset
select ai.put_checkpoint('cn', '', 'c2', 'c1', 'json', '\x7b7d', '{"step": 0, "source": "loop"}') as c2 \gset
select ai.put_writes('cn', '', 'c2', 'task-draft', array[0], array['steps'], array['json'], array['\x7b7d'::bytea],
                     '~__pregel_pull, draft') as w2 \gset
select ai.put_checkpoint('cn', '', 'c3', 'c2', 'json', '\x7b7d', '{"step": 1, "source": "loop"}') as c3 \gset
select ai.put_writes('cn', '', 'c3', 'task-approve', array[-3], array['__interrupt__'], array['json'], array['\x7b7d'::bytea],
                     '~__pregel_pull, approve') as w3 \gset

select results_eq(
  $$select checkpoint_id, nodes, interrupted from ai.checkpoint_nodes('cn', '', array['c1', 'c2', 'c3', 'nope'])$$,
  $$values ('c1'::text, null::text[], false), ('c2', array['__start__'], false), ('c3', array['draft'], true)$$,
  'the root has no node; each other checkpoint is named by its parent''s tasks; c3 is where the graph paused');
select throws_ok($$select * from ai.checkpoint_nodes('cn', '', null)$$, 'AS002', null, 'the ids are needed');
set local role tenant_b;
select throws_ok($$select * from ai.checkpoint_nodes('cn', '', array['c1'])$$, 'AS001', null, 'another tenant''s thread is unknown');

select * from finish();
rollback;
