\ir ../fixtures/helpers.sql
begin;
select plan(10);

-- Random characters of four bytes each (U+10000 and up: no surrogate, no repeat to compress), then
-- ASCII up to the exact number of bytes: every key of the checkpoint tables at its documented
-- maximum (issue 37) in the text that takes the most room in an index entry.
select string_agg(chr(65536 + (i * 7919) % 1000000), '') as t255 from generate_series(1, 255) i \gset
select string_agg(chr(65536 + (i * 6007) % 1000000), '') as ns1024 from generate_series(1, 256) i \gset
select string_agg(chr(65536 + (i * 4001) % 1000000), '') || 'abc' as id255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 3001) % 1000000), '') || 'abc' as parent255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 2003) % 1000000), '') || 'abc' as ch255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 1009) % 1000000), '') || 'abc' as v255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 5003) % 1000000), '') || 'abc' as task255 from generate_series(1, 63) i \gset

set local role tenant_a;
select is(ai.put_checkpoint(:'t255', :'ns1024', :'id255', :'parent255', 'json', '\x01', '{}',
                            jsonb_build_object(:'ch255', :'v255'), channel_values => row(array[:'ch255'], array[:'v255'], array['json'], array['\x01'::bytea], null)::ai.checkpoint_values),
          :'id255', 'a checkpoint with thread id (255 characters), namespace (1024 bytes), id, parent, channel and version (255 bytes) at their maxima is stored');
select is(ai.put_writes(:'t255', :'ns1024', :'id255', :'task255', array[0], array[:'ch255'], array['json'], array['\x01'::bytea]),
          1, 'a pending write with its task id at 255 bytes too');

select throws_ok(format('select ai.put_checkpoint(%L, %L, %L, null, %L, %L)', 't-bytes', :'ns1024' || 'a', 'c1', 'json', '\x01'),
                 'AS002', 'checkpoint_ns is longer than 1024 bytes (1025 bytes of UTF-8)', 'a namespace of 1025 bytes (256 characters)');
select throws_ok(format('select ai.put_checkpoint(%L, %L, %L, null, %L, %L)', 't-bytes', '', :'id255' || 'a', 'json', '\x01'),
                 'AS002', 'checkpoint_id is longer than 255 bytes (256 bytes of UTF-8)', 'a checkpoint id of 256 bytes (67 characters)');
select throws_ok(format('select ai.put_checkpoint(%L, %L, %L, %L, %L, %L)', 't-bytes', '', 'c1', :'parent255' || 'a', 'json', '\x01'),
                 'AS002', 'parent_checkpoint_id is longer than 255 bytes (256 bytes of UTF-8)', 'a parent of 256 bytes');
select throws_ok(format($$select ai.put_checkpoint('t-bytes', '', 'c1', null, 'json', '\x01', '{}', '{}', channel_values => row(array[%L], array['1'], array['json'], array['\x01'::bytea], null)::ai.checkpoint_values)$$, :'ch255' || 'a'),
                 'AS002', 'a channel name is longer than 255 bytes', 'a channel name of 256 bytes');
select throws_ok(format($$select ai.put_checkpoint('t-bytes', '', 'c1', null, 'json', '\x01', '{}', '{}', channel_values => row(array['m'], array[%L], array['json'], array['\x01'::bytea], null)::ai.checkpoint_values)$$, :'v255' || 'a'),
                 'AS002', 'the version of channel m is longer than 255 bytes', 'a version of 256 bytes');
select throws_ok(format($$select ai.put_writes('t-bytes', '', 'c1', %L, array[0], array['m'], array['json'], array['\x01'::bytea])$$,
                        :'task255' || 'a'),
                 'AS002', 'task_id is longer than 255 bytes (256 bytes of UTF-8)', 'a task id of 256 bytes');
-- the former maximum, 255 characters of four bytes, was refused by the index with 54000; now up front
select throws_ok(format('select ai.put_checkpoint(%L, %L, %L, null, %L, %L)', 't-bytes', :'ns1024', :'t255', 'json', '\x01'),
                 'AS002', 'checkpoint_id is longer than 255 bytes (1020 bytes of UTF-8)', '255 four-byte characters: AS002, not 54000');
reset role;
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-bytes'), 0, 'nothing written for the refused ones');

select * from finish();
rollback;
