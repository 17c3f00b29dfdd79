\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
select pg_temp.delta_chain('t-dh', 4, array[1]);

select is(array(select pg_catalog.convert_from(h.blob, 'UTF8') from ai.delta_channel_history('t-dh', '', null, array['ch']) h),
          array['s1', 'w1', 'w2', 'w3'], 'NULL checkpoint_id: the newest checkpoint of the namespace');
select is(pg_temp.history('t-dh', 'nope'), '{}'::text[], 'an unknown checkpoint: no rows');

select * from finish();
rollback;
