\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select pg_temp.put_ckpt('t-l1', 'c1', null, '', '{"run_id": "r"}');
select pg_temp.put_ckpt('t-l2', 'c2', null, '', '{"run_id": "r"}');
set local role tenant_b;
select pg_temp.put_ckpt('t-l3', 'c3', null, '', '{"run_id": "r"}');

select is(array(select thread_id from ai.list_checkpoints(null, metadata_filter => '{"run_id": "r"}')), array['t-l3'],
          'tenant_b sees only its own thread');
set local role tenant_a;
select is(array(select thread_id from ai.list_checkpoints(null, metadata_filter => '{"run_id": "r"}')), array['t-l2', 't-l1'],
          'tenant_a its two, newest id first');

select * from finish();
rollback;
