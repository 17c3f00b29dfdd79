\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;

select pg_temp.put_ckpt('t-cur', 'c2', null);
select is((ai.get_session('t-cur')).current_checkpoint_id, 'c2', 'the first root checkpoint becomes current');
select pg_temp.put_ckpt('t-cur', 'c3', 'c2');
select is((ai.get_session('t-cur')).current_checkpoint_id, 'c3', 'a newer one takes over');
select pg_temp.put_ckpt('t-cur', 'c1', null);
select is((ai.get_session('t-cur')).current_checkpoint_id, 'c3', 'an older id put late does not move it back');
select pg_temp.put_ckpt('t-cur', 'c9', null, 'child:1');
select is((ai.get_session('t-cur')).current_checkpoint_id, 'c3', 'a subgraph namespace does not move it');

select * from finish();
rollback;
