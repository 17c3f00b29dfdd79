\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;

select pg_temp.put_list('t-nobase', 'c1', null, 'v1', '\x9101');
select throws_ok($$select pg_temp.put_list('t-nobase', 'c2', 'c1', 'v2', '\x9102', 'v-missing')$$, 'AS061',
                 'a channel delta extends a version that is not stored, or is not a list of items',
                 'a delta of a version that is not stored');
select throws_ok($$select pg_temp.put_list('t-nobase', 'c2', 'c1', 'v2', '\xa161', 'v1')$$, 'AS061',
                 'a channel delta extends a version that is not stored, or is not a list of items',
                 'a delta that is not a msgpack array');
select throws_ok($$select pg_temp.put_list('t-nobase', 'c2', 'c1', 'v2', '\x9102', 'v2')$$, 'AS061',
                 'a channel delta extends a version that is not stored, or is not a list of items',
                 'a delta of itself (no chain may loop)');
select is((select count(*)::int from ai.list_checkpoints('t-nobase', '')), 1, 'nothing written');

select * from finish();
rollback;
