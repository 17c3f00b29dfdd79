\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

-- One thread stages thousands of pending writes on one checkpoint (a fan-out step) and the
-- statistics are taken then: a generic plan priced from them read all of ai.checkpoint_writes for
-- every get_checkpoint of every thread. The reads must stay key probes.
set local role tenant_a;
select pg_temp.put_ckpt('t-fanout', 'c1', null);
select ai.put_writes('t-fanout', '', 'c1', 'task-' || i, array[0], array['ch'], array['msgpack'], array['\x01']::bytea[])
from generate_series(1, 3000) i;
select pg_temp.put_ckpt('t-small', 'c1', null);
reset role;
analyze ai.checkpoint_writes, ai.checkpoints, ai.checkpoint_blobs;

set local role tenant_a;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select pg_stat_get_xact_numscans('ai.checkpoint_writes'::regclass) as before \gset
set local role tenant_a;
select count(*) from (select ai.get_checkpoint('t-small') from generate_series(1, 8)) x;
select count(*) from ai.list_checkpoints('t-small', '', null, 10);
select count(*) from ai.list_checkpoints('t-small', null, null, 10);
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is(pg_stat_get_xact_numscans('ai.checkpoint_writes'::regclass) - :before, 0::bigint,
          'ten reads of another thread: no sequential scan of the pending writes');
set local role tenant_a;
select is((select count(*) from ai.get_checkpoint('t-fanout'))::integer, 1, 'and the fan-out thread reads fine too');

select * from finish();
rollback;
