\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
-- p1 names a version of ch with no value row and no delta counter: a value of the channel's
-- earlier (non-delta) type, small enough to be kept inline in the checkpoint bytes
select ai.put_checkpoint('t-dh', '', 'p1', null, 'test', '\x0102', '{}', '{"ch": "1"}');
select ai.put_writes('t-dh', '', 'p1', 'task', array[0], array['ch'], array['test'], array['\x7731']::bytea[]);
select pg_temp.delta_chain('t-dh', 3, '{}', first_parent => 'p1');

select is(pg_temp.history('t-dh', 'd000003'), array['checkpoint:p1', 'w1', 'w1', 'w2'],
          'the walk ends at p1, whose checkpoint the caller reads for the value; p1''s writes count');
select is((select h.blob from ai.delta_channel_history('t-dh', '', 'd000003', array['ch']) h where h.kind = 'checkpoint'),
          '\x0102'::bytea, 'with p1''s checkpoint bytes');

select * from finish();
rollback;
