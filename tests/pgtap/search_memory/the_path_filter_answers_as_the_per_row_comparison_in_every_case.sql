\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- ai.search_memory tests a row by one SQL/JSON path (ai._memory_filter), not by ai._memory_compare
-- per row; the two must agree on every value a field can hold, for every operator and operand:
-- missing fields, JSON null, arrays and objects, numbers against strings, booleans, $in lists with
-- several types, the negations. The reference is ai._memory_compare on the field's value.
create temp table cases as
select v.value, o.op, o.operand
from (values ('{}'::jsonb), ('{"f": null}'), ('{"f": 9}'), ('{"f": 10}'), ('{"f": 9.0}'), ('{"f": "9"}'), ('{"f": "10"}'),
             ('{"f": "a"}'), ('{"f": true}'), ('{"f": false}'), ('{"f": [9]}'), ('{"f": [9, "a"]}'), ('{"f": {"g": 1}}'),
             ('{"f": []}')) v(value),
     (select op, operand
      from unnest(array['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']) op,
           (values ('9'::jsonb), ('10'), ('"9"'), ('"10"'), ('true'), ('false'), ('null'), ('[9]'), ('{"g": 1}'), ('[]')) x(operand)
      union all
      select op, operand
      from unnest(array['$in', '$nin']) op,
           (values ('[9]'::jsonb), ('["9", 10]'), ('[null]'), ('[true, "a"]'), ('[[9], 9]'), ('[{"g": 1}]'), ('[]')) x(operand)
      union all
      select '$exists', operand from (values ('true'::jsonb), ('false')) x(operand)) o;

create temp table verdicts as
select c.value, c.op, c.operand,
       ai._memory_compare(c.value -> 'f', c.op, c.operand) as expected,
       (f.contains is null or c.value @> f.contains)
       and (f.path is null or jsonb_path_exists(c.value, f.path, f.vars, true))
       and (f.rest is null or ai._memory_passes(c.value, f.rest)) as got,
       f.path is not null as by_path
from cases c, ai._memory_filter(jsonb_build_object('f', jsonb_build_object(c.op, c.operand))) f;

select is_empty($$select format('%s %s %s: expected %s', value, op, operand, expected) from verdicts where got is distinct from expected$$,
                'every value, operator and operand: the filter says what ai._memory_compare says');
select ok((select count(*) filter (where by_path) > 0.5 * count(*) from verdicts),
          'and more than half of these odd ones too are answered by the path, not by a function per row');

-- A plain value is equality too: scalars by containment (the GIN index), the rest by the path.
select is_empty($$
  select format('%s = %s', v.value, x.operand)
  from (select value from cases group by value) v, (values ('9'::jsonb), ('"9"'), ('null'), ('[9]'), ('{"g": 1}')) x(operand),
       ai._memory_filter(jsonb_build_object('f', x.operand)) f
  where ((f.contains is null or v.value @> f.contains)
         and (f.path is null or jsonb_path_exists(v.value, f.path, f.vars, true))
         and (f.rest is null or ai._memory_passes(v.value, f.rest)))
        is distinct from ai._memory_compare(v.value -> 'f', '$eq', x.operand)$$,
  'a plain value filters as $eq');

-- A field name is a quoted key of the path, whatever it holds: quotes, backslashes, $, path syntax.
set local role tenant_a;
select ai.put_memory('{p}', 'odd', jsonb_build_object(E'a"b\\c $x ) || @.d', 5, 'plain', 1));
select ai.put_memory('{p}', 'other', jsonb_build_object('plain', 1, 'd', 5));
select is((select array_agg(key) from ai.search_memory('{p}', jsonb_build_object(E'a"b\\c $x ) || @.d', '{"$gte": 5}'::jsonb))),
          '{odd}'::text[], 'a field holding quotes, a backslash, $ and path syntax names only that field');

select * from finish();
rollback;
