\ir ../fixtures/helpers.sql
begin;
select plan(7);
set local role tenant_a;
select ai.put_checkpoint('t-ra', '', 'c1', null, 'test', '\x01', '{}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-ra', '', 'c1', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);
set local role tenant_b;
select ai.put_checkpoint('t-rb', '', 'c1', null, 'test', '\x01', '{}', '{}');
select is((select count(*)::int from ai.list_checkpoints('t-ra')) + (select count(*)::int from ai.list_checkpoints('t-rb')), 1,
          'tenant_b sees one checkpoint, its own');
select is_empty($$select * from ai.get_checkpoint('t-ra')$$, 'and none of tenant_a''s values or writes');
select throws_ok($$insert into ai.checkpoints (thread_id, checkpoint_id, owner, type, checkpoint) values ('t-ra', 'x', 'tenant_a', 't', '\x01')$$,
                 '42501', null, 'it cannot write a row owned by tenant_a');
set local role app_service;
select is((select count(*)::int from ai.list_checkpoints('t-ra')) + (select count(*)::int from ai.list_checkpoints('t-rb')), 2,
          'a service acting for no one sees both');
select is((select metadata from ai.get_checkpoint('t-ra')), '{}'::jsonb, 'tenant_a''s checkpoint is unchanged');
select ai.act_as('tenant_a');
select is((select count(*)::int from ai.list_checkpoints('t-ra')) + (select count(*)::int from ai.list_checkpoints('t-rb')), 1,
          'acting for tenant_a, only its');
select ai.put_checkpoint('t-ra', '', 'c2', 'c1', 'test', '\x01', '{}', '{}');
reset role;
select is((select owner from ai.checkpoints where thread_id = 't-ra' and checkpoint_id = 'c2'), 'tenant_a',
          'and writes checkpoints owned by tenant_a');

select * from finish();
rollback;
