\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(3);
set local role tenant_a;
-- both channels written at every step (a new version each), a stored at c1 only, b at c3 only;
-- every checkpoint has one write for each and counts both as delta channels
select ai.put_checkpoint('t-dh', '', 'c' || i, case when i > 1 then 'c' || (i - 1) end, 'test', '\x01',
                         '{"counters_since_delta_snapshot": {"a": [1, 1], "b": [1, 1]}}',
                         pg_catalog.jsonb_build_object('a', i::text, 'b', i::text), channel_values => row(case i when 1 then array['a'] when 3 then array['b'] else '{}' end, case i when 1 then array['1'] when 3 then array['3'] else '{}' end, case when i in (1, 3) then array['test'] else '{}' end, case i when 1 then array['\x61']::bytea[] when 3 then array['\x62']::bytea[] else '{}' end, null)::ai.checkpoint_values)
from generate_series(1, 5) i;
select ai.put_writes('t-dh', '', 'c' || i, 'task', array[0, 1], array['a', 'b'], array['test', 'test'],
                     array[pg_catalog.convert_to('a' || i, 'UTF8'), pg_catalog.convert_to('b' || i, 'UTF8')])
from generate_series(1, 5) i;

select is(array(select h.kind || ':' || pg_catalog.convert_from(h.blob, 'UTF8')
                from ai.delta_channel_history('t-dh', '', 'c5', array['a', 'b']) h where h.channel = 'a'),
          array['seed:a', 'write:a1', 'write:a2', 'write:a3', 'write:a4'], 'a: back to c1');
select is(array(select h.kind || ':' || pg_catalog.convert_from(h.blob, 'UTF8')
                from ai.delta_channel_history('t-dh', '', 'c5', array['a', 'b']) h where h.channel = 'b'),
          array['seed:b', 'write:b3', 'write:b4'], 'b: back to c3 only, in the same call');
select is(array(select distinct h.channel from ai.delta_channel_history('t-dh', '', 'c5', array['a', 'a', 'b']) h),
          array['a', 'b'], 'a channel named twice is walked once');

select * from finish();
rollback;
