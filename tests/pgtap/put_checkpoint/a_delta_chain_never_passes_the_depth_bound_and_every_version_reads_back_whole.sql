\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(5);

-- The msgpack list of the integers 0 .. n (each a positive fixint: one byte).
create function pg_temp.ints(n integer) returns bytea language sql as $$
  select case when n < 15 then pg_catalog.set_byte('\x00'::bytea, 0, 145 + n)
              else '\xdc'::bytea || pg_catalog.substr(pg_catalog.int4send(n + 1), 3) end
         || (select pg_catalog.string_agg(pg_catalog.set_byte('\x00'::bytea, 0, i), ''::bytea order by i)
             from generate_series(0, n) i)
$$;

-- A client that sends a delta at every step, far past the bound: [0], then [i] appended at step i.
set local role tenant_a;
select pg_temp.put_list('t-bound', 'c000', null, 'v000', '\x9100');
do $$
begin
  for i in 1 .. 100 loop
    perform pg_temp.put_list('t-bound', 'c' || lpad(i::text, 3, '0'), 'c' || lpad((i - 1)::text, 3, '0'),
                             'v' || lpad(i::text, 3, '0'), pg_catalog.set_byte('\x9100'::bytea, 1, i),
                             'v' || lpad((i - 1)::text, 3, '0'));
  end loop;
end
$$;
select is((select count(*)::int from generate_series(0, 100) i
           where pg_temp.list_value('t-bound', 'c' || lpad(i::text, 3, '0')) is distinct from pg_temp.ints(i)),
          0, 'every version reads back as the whole list');
reset role;
-- The thread's values, read first: on a Citus formation a query of one thread's rows is sent
-- whole to the worker that holds it, where this session's pg_temp functions do not exist.
create temp table blobs as select b.channel, b.version, b.base_version, b.delta_depth from ai.checkpoint_blobs b
where b.thread_id = 't-bound';

-- The links a read of a version follows, counted on base_version alone.
create function pg_temp.links(version text) returns integer language sql as $$
  with recursive chain as (
    select b.base_version, 0 as n from blobs b
    where b.channel = 'm' and b.version = links.version
    union all
    select b.base_version, c.n + 1 from chain c
    join blobs b on b.channel = 'm' and b.version = c.base_version
  )
  select max(n) from chain
$$;

select cmp_ok((select max(pg_temp.links(b.version)) from blobs b),
              '<=', ai._max_delta_depth(), 'no read follows more links than ai._max_delta_depth()');
select is((select count(*)::int from blobs b where b.delta_depth <> pg_temp.links(b.version)),
          0, 'delta_depth is the links a read follows');
select is((select base_version from ai.checkpoint_blobs b
           where b.thread_id = 't-bound' and b.version = 'v' || lpad((ai._max_delta_depth() + 1)::text, 3, '0')),
          null, 'the delta past the bound is stored whole');
select is((select count(*)::int from ai.checkpoint_blobs b where b.thread_id = 't-bound' and b.base_version is null),
          1 + 100 / (ai._max_delta_depth() + 1), 'a whole value every bound + 1 versions, no more');

select * from finish();
rollback;
