\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(8);
set local role tenant_a;

-- A delta is joined to its base by their array headers: bytes whose header lies about the items,
-- that carry more than one array, or that are not msgpack would rebuild a wrong list (silently).
select pg_temp.put_list('t-lie', 'c1', null, 'v1', '\x920102');
select throws_ok($$select pg_temp.put_list('t-lie', 'c2', 'c1', 'v2', '\x9303', 'v1')$$, 'AS061', null,
                 'a header that counts more items than follow');
select throws_ok($$select pg_temp.put_list('t-lie', 'c2', 'c1', 'v2', '\x910304', 'v1')$$, 'AS061', null,
                 'a header that counts fewer items than follow');
select throws_ok($$select pg_temp.put_list('t-lie', 'c2', 'c1', 'v2', '\x91d9056869', 'v1')$$, 'AS061', null,
                 'an item cut short (a str 8 of 5 bytes with 2)');
select throws_ok($$select pg_temp.put_list('t-lie', 'c2', 'c1', 'v2', '\x9c5b312c325d', 'v1')$$, 'AS061', null,
                 'a fixarray header before bytes that are not its items (JSON [1,2])');
select throws_ok($$select ai.put_checkpoint('t-lie', '', 'c2', 'c1', 'test', '\x01'::bytea, '{}', '{"m": "v2"}',
                                          channel_values => row(array['m'], array['v2'], array['json'],
                                            array['\x9103'::bytea], array['v1'])::ai.checkpoint_values)$$, 'AS061', null,
                 'a delta whose type is not msgpack');

-- a whole value that is not a msgpack array (a str): its first delta is refused, not joined to it
select pg_temp.put_list('t-lie', 'c3', 'c1', 'v3', '\xa161');
select throws_ok($$select pg_temp.put_list('t-lie', 'c4', 'c3', 'v4', '\x9102', 'v3')$$, 'AS061', null,
                 'a delta of a whole value that is not a msgpack array');

-- well-formed items of every kind pass: nil, bool, ints, float, str, bin, ext, a nested map and array
select lives_ok($$select pg_temp.put_list('t-lie', 'c5', 'c1', 'v5',
                    '\x9bc0c3cc05d1fffecb3ff0000000000000a26869c40201020d17c70205010281a16192c001', 'v1')$$,
                'a delta of well-formed items of every kind is stored');
select is(pg_temp.list_value('t-lie', 'c5'),
          '\x9d0102c0c3cc05d1fffecb3ff0000000000000a26869c40201020d17c70205010281a16192c001'::bytea,
          'and reads back as the base''s items and its own');

select * from finish();
rollback;
