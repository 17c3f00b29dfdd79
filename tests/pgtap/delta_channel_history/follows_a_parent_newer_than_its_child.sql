\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
-- ids in no time order: the chain z000001 <- z000002 (z1 stores a value), then a000001 <- a000002
-- with z000002 as a000001's parent. From a000002 the walk's range scan (ids up to a000001) finds
-- a000001, whose parent is a newer id: the rest is primary-key probes, through the same per-channel
-- step (ai._delta_walk has one).
select pg_temp.delta_chain('t-odd', 2, '{1}', prefix => 'z');
select pg_temp.delta_chain('t-odd', 2, '{}', prefix => 'a', first_parent => 'z000002');
select is(pg_temp.history('t-odd', 'a000002'), array['seed:s1', 'z1', 'z2', 'a1'],
          'the seed of the older chain, and every write since, across the scan and the probes');
select pg_temp.delta_chain('t-odd2', 2, '{}', prefix => 'z');
select pg_temp.delta_chain('t-odd2', 2, '{}', prefix => 'a', first_parent => 'z000002');
select is(pg_temp.history('t-odd2', 'a000002'), array['z1', 'z2', 'a1'], 'no value stored: to the root by probes');

select * from finish();
rollback;
