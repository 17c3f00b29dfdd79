-- Deploy agent-state:memory_functions to pg
-- requires: memory
--
-- The functions of long-term memory (its tables: deploy/memory.sql). CREATE OR REPLACE
-- throughout, so this change deploys over itself.
--
-- Every function acts for ai.current_owner(): a tenant reads and writes its own items, a trusted
-- back-end those of the end user it acts for (ai.act_as), or its own when it acts for nobody.
-- Row level security says the same a second time. Every read compares expires_at with ai.now():
-- an expired item is never returned, never refreshed and never listed, swept or not.
--
-- ai.batch_memory runs a list of operations (get, put, search, list_namespaces) in one call and
-- one transaction, in order, and returns their results in order: LangGraph's BaseStore.batch in
-- one round trip, safe behind a transaction pooler (one statement, no prepared plan needed).
--
-- Filters (search): a JSON object; each member names a top-level field of the value and holds
-- either a value (equal to it) or an object of operators, all of which must hold: $eq, $ne,
-- $gt, $gte, $lt, $lte (compared by JSON type: numbers as numbers, strings as strings; values of
-- different types are never ordered, so 9 < 10 and "9" > "10"; strings by code point), $in and
-- $nin (a JSON array of values), $exists (true or false). Any other operator raises AS002.
begin;

-- Guards -----------------------------------------------------------------------------------------

create or replace function ai._check_memory_namespace(namespace text[], argument text, allow_empty boolean default false)
returns void
language plpgsql immutable parallel safe
as $$
begin
  if namespace is null then
    raise exception using errcode = 'AS002', message = format('%s must not be NULL', argument);
  end if;
  if pg_catalog.cardinality(namespace) = 0 and allow_empty then
    return;
  end if;
  if pg_catalog.cardinality(namespace) not between 1 and 20 or pg_catalog.array_ndims(namespace) <> 1 then
    raise exception using errcode = 'AS002',
      message = format('%s must have 1 to 20 labels, not %s', argument, pg_catalog.cardinality(namespace));
  end if;
  if not ai._memory_labels_ok(namespace) then
    raise exception using errcode = 'AS002',
      message = format('%s labels must be 1 to 255 characters without U+001F (no NULL or empty label), 192 characters in all with one separator between each two', argument);
  end if;
end
$$;
comment on function ai._check_memory_namespace(text[], text, boolean) is
  'Internal guard: raises AS002 unless a namespace is 1 to 20 labels of 1 to 255 characters without U+001F, 192 characters in all joined by one separator (or empty where allowed).';

-- A search's filter, read once per call (ai._memory_filter) into what each row is tested by:
--   contains  the members that are plain scalars ({"tag": "t3"}), as one object: value @> contains
--             is exactly their equality (a scalar is contained at a key only when equal to it) and
--             the GIN index of values answers it;
--   path/vars the other conditions as one SQL/JSON path, tested per row by the built-in
--             jsonb_path_exists(value, path, vars) in the search's own SQL (no function call of
--             ours per row: PL/pgSQL cost some 20 us a row, the path about 1). The operands are
--             never written into the path: each is a variable ($c<i>, in vars). The fields are, as
--             quoted keys (to_jsonb(field)::text, a JSON string literal, which the path syntax
--             reads the same way), so no filter can change the path's structure. Strict mode: a
--             missing field is unknown, not an empty match, and an array is not unwrapped (["a"]
--             does not equal "a", as jsonb equality says). SQL/JSON path compares by JSON type:
--             values of different types are unknown, never ordered and never equal; strings by
--             code point. $ne, $nin and "$exists": false hold where the positive test is false or
--             unknown;
--   rest      what the path cannot say as ai._memory_compare does, as [[field, op, operand], ...]
--             for ai._memory_passes (per row, rare): equality with an object or an array (the path
--             compares scalars only), an order against null, an object or an array (never true;
--             the path would say null >= null), an empty $in or $nin.
-- The operators are checked here, before any row is read (an empty result is no excuse): AS002.
create or replace function ai._memory_filter(filter jsonb, out contains jsonb, out path jsonpath, out vars jsonb, out rest jsonb)
language plpgsql immutable parallel safe
as $$
declare
  v_field text;
  v_cond jsonb;
  v_op text;
  v_operand jsonb;
  v_type text;
  v_f text;
  v_v text;
  v_test text;
  v_tests text[] := '{}'::text[];
  v_rest jsonb := '[]'::jsonb;
  v_n integer := 0;
begin
  vars := '{}';
  for v_field, v_cond in select e.key, e.value from pg_catalog.jsonb_each(filter) e order by e.key loop
    if pg_catalog.jsonb_typeof(v_cond) <> 'object' or not pg_catalog.jsonb_path_exists(v_cond, '$.keyvalue() ? (@.key starts with "$")') then
      if pg_catalog.jsonb_typeof(v_cond) in ('string', 'number', 'boolean') then
        contains := coalesce(contains, '{}') || pg_catalog.jsonb_build_object(v_field, v_cond);
        continue;
      end if;
      v_cond := pg_catalog.jsonb_build_object('$eq', v_cond);  -- null, an object or an array
    end if;
    v_f := '@.' || pg_catalog.to_jsonb(v_field)::text;
    for v_op, v_operand in select o.key, o.value from pg_catalog.jsonb_each(v_cond) o order by o.key loop
      perform ai._memory_compare(null, v_op, v_operand);  -- AS002 for an unknown operator or a wrong operand
      v_type := pg_catalog.jsonb_typeof(v_operand);
      v_v := '$c' || v_n;
      v_test := case
        when v_op in ('$eq', '$ne') and v_type <> 'object' and v_type <> 'array' then
          pg_catalog.format('(%s == %s)', v_f, v_v)
        when v_op in ('$gt', '$gte', '$lt', '$lte') and v_type in ('string', 'number', 'boolean') then
          pg_catalog.format('(%s %s %s)', v_f, case v_op when '$gt' then '>' when '$gte' then '>=' when '$lt' then '<' else '<=' end, v_v)
        when v_op in ('$in', '$nin') and pg_catalog.jsonb_array_length(v_operand) > 0
             and not pg_catalog.jsonb_path_exists(v_operand, 'strict $[*] ? (@.type() == "object" || @.type() == "array")') then
          '(' || pg_catalog.array_to_string(array(
                   select pg_catalog.format('%s == %s[%s]', v_f, v_v, k)
                   from pg_catalog.generate_series(0, pg_catalog.jsonb_array_length(v_operand) - 1) k), ' || ') || ')'
        when v_op = '$exists' then
          pg_catalog.format('(exists(%s))', v_f)
      end;
      if v_test is null then
        v_rest := v_rest || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_array(v_field, v_op, v_operand));
        continue;
      end if;
      if v_op in ('$ne', '$nin') or (v_op = '$exists' and v_operand = 'false'::jsonb) then
        v_test := pg_catalog.format('(%s is unknown || !%s)', v_test, v_test);
      end if;
      v_tests := v_tests || v_test;
      vars := vars || pg_catalog.jsonb_build_object('c' || v_n, v_operand);
      v_n := v_n + 1;
    end loop;
  end loop;
  if pg_catalog.cardinality(v_tests) > 0 then
    path := ('strict $ ? (' || pg_catalog.array_to_string(v_tests, ' && ') || ')')::jsonpath;
  end if;
  if pg_catalog.jsonb_array_length(v_rest) > 0 then
    rest := v_rest;
  end if;
end
$$;
comment on function ai._memory_filter(jsonb) is
  'Internal: a search filter read once: contains (its scalar equalities, for value @> and the GIN index), path and vars (the other conditions as one strict SQL/JSON path with the operands as variables, for jsonb_path_exists), rest (the conditions the path cannot say, for ai._memory_passes; NULL when none). AS002 for an unknown operator or a wrong operand.';

-- Whether a value passes a filter's conditions (see the header for the operators).
create or replace function ai._memory_passes(value jsonb, conditions jsonb)
returns boolean
language plpgsql immutable parallel safe
as $$
declare
  v_cond jsonb;
begin
  for v_i in 0 .. pg_catalog.jsonb_array_length(conditions) - 1 loop
    v_cond := conditions -> v_i;
    if not ai._memory_compare(value -> (v_cond ->> 0), v_cond ->> 1, v_cond -> 2) then
      return false;
    end if;
  end loop;
  return true;
end
$$;
comment on function ai._memory_passes(jsonb, jsonb) is
  'Internal: true when a memory value passes every [field, operator, operand] condition (the rest of ai._memory_filter; operators $eq $ne $gt $gte $lt $lte $in $nin $exists, compared by JSON type).';

create or replace function ai._memory_compare(actual jsonb, op text, operand jsonb)
returns boolean
language plpgsql immutable parallel safe
as $$
declare
  v_same_type boolean := pg_catalog.jsonb_typeof(actual) = pg_catalog.jsonb_typeof(operand)
                         and pg_catalog.jsonb_typeof(operand) in ('number', 'string', 'boolean');
begin
  -- jsonb orders numbers numerically and strings as strings; comparing only values of one type
  -- keeps a number from ever being "less than" a string (jsonb orders across types too).
  case op
    when '$eq' then return actual is not null and actual = operand;
    when '$ne' then return actual is null or actual <> operand;
    when '$gt' then return coalesce(v_same_type and actual > operand, false);
    when '$gte' then return coalesce(v_same_type and actual >= operand, false);
    when '$lt' then return coalesce(v_same_type and actual < operand, false);
    when '$lte' then return coalesce(v_same_type and actual <= operand, false);
    when '$in', '$nin' then
      if pg_catalog.jsonb_typeof(operand) is distinct from 'array' then
        raise exception using errcode = 'AS002', message = format('filter operator %s takes a JSON array', op);
      end if;
      return (actual is not null and exists (select from pg_catalog.jsonb_array_elements(operand) e where e = actual))
             = (op = '$in');
    when '$exists' then
      if pg_catalog.jsonb_typeof(operand) is distinct from 'boolean' then
        raise exception using errcode = 'AS002', message = 'filter operator $exists takes true or false';
      end if;
      return (actual is not null) = (operand = 'true'::jsonb);
    else
      raise exception using errcode = 'AS002',
        message = format('unknown filter operator %s (allowed: $eq $ne $gt $gte $lt $lte $in $nin $exists)', op);
  end case;
end
$$;
comment on function ai._memory_compare(jsonb, text, jsonb) is
  'Internal: one filter operator applied to a field''s value (NULL when the field is absent); ordered comparisons hold only between values of one JSON type.';

-- Similarity of two embeddings, higher is nearer: cosine similarity, inner product, or minus the
-- euclidean distance (the scores LangGraph's PostgresStore returns for its distance types).
create or replace function ai._memory_similarity(a real[], b real[], distance text)
returns double precision
language sql immutable parallel safe
as $$
  select case distance
           when 'l2' then -pg_catalog.sqrt(pg_catalog.sum((x::float8 - y::float8) ^ 2))
           when 'inner_product' then pg_catalog.sum(x::float8 * y::float8)
           else case when pg_catalog.sum(x::float8 * x::float8) = 0 or pg_catalog.sum(y::float8 * y::float8) = 0 then 0
                     else pg_catalog.sum(x::float8 * y::float8)
                          / (pg_catalog.sqrt(pg_catalog.sum(x::float8 * x::float8)) * pg_catalog.sqrt(pg_catalog.sum(y::float8 * y::float8)))
                end
         end
  from unnest(a, b) as t(x, y)  -- the multi-argument form is syntax, not a function of pg_catalog
$$;
comment on function ai._memory_similarity(real[], real[], text) is
  'Internal: exact similarity of two embeddings of one length (cosine, inner_product, or l2 as minus the distance): the search without pgvector.';

create or replace function ai._memory_embeddings(embeddings jsonb)
returns table (field text, embedding real[])
language plpgsql immutable parallel safe
as $$
begin
  if embeddings is null then
    return;
  end if;
  if pg_catalog.jsonb_typeof(embeddings) <> 'object'
     or exists (select from pg_catalog.jsonb_each(embeddings) e
                where pg_catalog.jsonb_typeof(e.value) <> 'array' or pg_catalog.jsonb_array_length(e.value) not between 1 and 16000
                   or pg_catalog.char_length(e.key) not between 1 and 64
                   or exists (select from pg_catalog.jsonb_array_elements(e.value) n where pg_catalog.jsonb_typeof(n) <> 'number')) then
    raise exception using errcode = 'AS002',
      message = 'embeddings must be a JSON object of field (1 to 64 characters) -> array of 1 to 16000 numbers';
  end if;
  return query
    select e.key, array(select n::text::real from pg_catalog.jsonb_array_elements(e.value) with ordinality as a(n, i) order by i)
    from pg_catalog.jsonb_each(embeddings) e;
end
$$;
comment on function ai._memory_embeddings(jsonb) is
  'Internal: a JSON object of field -> embedding as rows of real[]; AS002 when it is not one.';

-- pgvector, when the database has it: ai.create_memory_vector_index(dims, distance) builds an HNSW
-- index over the embeddings of one length (an expression index: real[] cast to vector(dims)), and
-- ai.search_memory reads the nearest candidates through it. Without the extension or the index,
-- the search computes every similarity exactly in SQL; the scores are computed the same way on
-- both paths (ai._memory_similarity), so on small data both give the same results.
create or replace function ai._memory_vector_index(dims integer, distance text)
returns text
language sql stable parallel safe
as $$
  select c.relname::text from pg_catalog.pg_class c
  where c.relnamespace = 'ai'::regnamespace and c.relkind = 'i'
    and c.relname = pg_catalog.format('memory_vectors_hnsw_%s_%s', distance, dims)
    -- 0.8 or newer: an owner's rows are found past other owners' nearer ones only by an
    -- iterative index scan (hnsw.iterative_scan); an older pgvector gets the exact search
    and exists (select from pg_catalog.pg_extension e
                where e.extname = 'vector'
                  and pg_catalog.string_to_array(pg_catalog.split_part(e.extversion, '-', 1), '.')::integer[]
                      operator(pg_catalog.>=) array[0, 8, 0])
$$;
comment on function ai._memory_vector_index(integer, text) is
  'Internal: the name of the HNSW index of embeddings of this length and distance when pgvector 0.8 or newer (iterative index scans) and the index exist, else NULL (the exact search).';

-- One operation's arguments out of a batch's JSON. No query: the type test is a JSON path and the
-- array is read by jsonb_populate_record into the text[] field of ai.memory_item (its JSON array
-- path: each string element as it is, "NULL" included; an element's type was tested first),
-- where two queries per call (unnest and test, unnest and collect) cost a batch's put some 10 us.
create or replace function ai._memory_labels(value jsonb, argument text)
returns text[]
language plpgsql immutable parallel safe
as $$
begin
  if value is null or value = 'null'::jsonb then
    return null;
  end if;
  if pg_catalog.jsonb_typeof(value) <> 'array'
     or pg_catalog.jsonb_path_exists(value, 'strict $[*] ? (@.type() != "string")') then
    raise exception using errcode = 'AS002', message = format('%s must be a JSON array of strings', argument);
  end if;
  return (pg_catalog.jsonb_populate_record(null::ai.memory_item, pg_catalog.jsonb_build_object('namespace', value))).namespace;
end
$$;
comment on function ai._memory_labels(jsonb, text) is 'Internal: a JSON array of strings as text[] (NULL for null); AS002 otherwise.';

-- Whether the labels of a namespace start (or end) with a pattern, '*' matching any one label.
create or replace function ai._memory_labels_match(namespace text[], pattern text[], at_end boolean)
returns boolean
language sql immutable parallel safe
as $$
  select pattern is null or pg_catalog.cardinality(pattern) = 0
         or (pg_catalog.cardinality(namespace) >= pg_catalog.cardinality(pattern)
             and not exists (
               select from pg_catalog.generate_subscripts(pattern, 1) i
               where pattern[i] <> '*'
                 and pattern[i] is distinct from
                     namespace[case when at_end then pg_catalog.cardinality(namespace) - pg_catalog.cardinality(pattern) + i else i end]))
$$;
comment on function ai._memory_labels_match(text[], text[], boolean) is
  'Internal: true when a namespace starts (at_end false) or ends (at_end true) with the pattern''s labels, ''*'' matching any one label.';

-- The end of a namespace prefix's range of the primary key (deploy/memory.sql, "Prefixes"): the
-- items under the prefix have ns from ai._memory_ns(prefix) up to, not including, this; NULL for
-- the empty prefix (no end: every item of the owner). Inlined where it is called.
create or replace function ai._memory_ns_end(prefix text[])
returns text
language sql immutable parallel safe
as $$
  select case when pg_catalog.cardinality(prefix) > 0 then ai._memory_ns(prefix) || E'\x20' end
$$;
comment on function ai._memory_ns_end(text[]) is
  'Internal: the first ns past the range of a namespace prefix''s items (NULL for the empty prefix: no end).';

-- Public functions ---------------------------------------------------------------------------------

create or replace function ai.put_memory(namespace text[], key text, value jsonb, ttl interval default null,
                                         index_texts text[] default null, embeddings jsonb default null)
returns ai.memory_item
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_namespace alias for $1;
  a_key alias for $2;
  a_value alias for $3;
  a_ttl alias for $4;
  a_texts alias for $5;
  a_embeddings alias for $6;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_search tsvector;
  r ai.memory_items;
begin
  -- Guards: the common case tested inline (plain expressions, no call: as put_checkpoint), a
  -- failing argument sent to the shared guard, which raises its error.
  if a_namespace is null or pg_catalog.cardinality(a_namespace) not between 1 and 20
     or pg_catalog.array_ndims(a_namespace) <> 1 or not ai._memory_labels_ok(a_namespace) then
    perform ai._check_memory_namespace(a_namespace, 'namespace');
  end if;
  if a_key is null or a_key = '' or pg_catalog.char_length(a_key) > 128 then
    perform ai._check_text(a_key, 'key', 128);
  end if;
  if a_value is null or pg_catalog.jsonb_typeof(a_value) <> 'object'
     or pg_catalog.pg_column_size(a_value) > ai._max_document_bytes() then
    perform ai._check_document(a_value, 'value', true);
  end if;
  if a_ttl is not null and a_ttl <= interval '0' then
    raise exception using errcode = 'AS002', message = format('ttl must be positive, not %s', a_ttl);
  end if;
  if a_texts is null then
    v_search := pg_catalog.jsonb_to_tsvector('simple'::regconfig, a_value, '["key", "string"]');
  elsif pg_catalog.cardinality(a_texts) > 0 then
    if pg_catalog.octet_length(pg_catalog.array_to_string(a_texts, ' ')) > ai._max_document_bytes() then
      raise exception using errcode = 'AS003',
        message = format('index_texts are over the limit of %s bytes', ai._max_document_bytes());
    end if;
    v_search := pg_catalog.to_tsvector('simple'::regconfig, pg_catalog.array_to_string(a_texts, ' '));
  end if;

  -- An item there is updated (issue 34 item 8: the usual put replaces one; an UPDATE runs the row
  -- CHECK, the generated ns and the owner policy once, where INSERT ... ON CONFLICT DO UPDATE ran
  -- them for the row it tried to insert and again for the update, and took a speculative insertion);
  -- a new one is inserted, and one inserted meanwhile by another transaction is updated all the same.
  update ai.memory_items i
    set value = a_value, updated_at = v_now, ttl = a_ttl, expires_at = v_now + a_ttl, search_text = v_search,
        -- an expired item that was not swept yet is a new item
        created_at = case when i.expires_at <= v_now then v_now else i.created_at end
  where i.owner = v_owner and i.ns = ai._memory_ns(a_namespace) and i.key = a_key
  returning * into r;
  if not found then
    insert into ai.memory_items as i (owner, namespace, key, value, created_at, updated_at, ttl, expires_at, search_text)
    values (v_owner, a_namespace, a_key, a_value, v_now, v_now, a_ttl, v_now + a_ttl, v_search)
    on conflict (owner, ns, key) do update
      set value = excluded.value, updated_at = excluded.updated_at, ttl = excluded.ttl,
          expires_at = excluded.expires_at, search_text = excluded.search_text,
          created_at = case when i.expires_at <= excluded.updated_at then excluded.created_at else i.created_at end
    returning * into r;
  end if;

  delete from ai.memory_vectors v where v.owner = v_owner and v.ns = r.ns and v.key = a_key;
  if a_embeddings is not null then
    insert into ai.memory_vectors (owner, ns, key, field, embedding)
    select v_owner, r.ns, a_key, e.field, e.embedding from ai._memory_embeddings(a_embeddings) e;
  end if;

  return (r.namespace, r.key, r.value, r.created_at, r.updated_at, r.expires_at, null)::ai.memory_item;
end
$$;
comment on function ai.put_memory(text[], text, jsonb, interval, text[], jsonb) is
  'Stores a memory item of the caller (a JSON object under a namespace and key), replacing the one there. ttl: it expires that long after its last write (or read with refresh). index_texts: the texts full-text search ranks it by (NULL: the keys and strings of the whole value; empty: not searchable by text). embeddings: {field: [numbers]} for vector search. AS002 bad argument, AS003 value over 1 MiB.';

create or replace function ai.get_memory(namespace text[], key text, refresh_ttl boolean default false)
returns setof ai.memory_item
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_namespace alias for $1;
  a_key alias for $2;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_ns text;
  r ai.memory_items;
begin
  perform ai._check_memory_namespace(a_namespace, 'namespace');
  perform ai._check_text(a_key, 'key', 128);
  v_ns := ai._memory_ns(a_namespace);
  if refresh_ttl then
    -- one statement here; on a Citus formation ai.distribute() makes it two (the ttl read and the
    -- row locked first, then the UPDATE with the new expiry as a value): Citus refuses a STABLE
    -- operator such as timestamptz + interval applied to a column in an UPDATE of a distributed table
    update ai.memory_items i set expires_at = v_now + i.ttl
    where i.owner = v_owner and i.ns = v_ns and i.key = a_key and i.ttl is not null and i.expires_at > v_now
    returning * into r;
  end if;
  if r.key is null then
    select * into r from ai.memory_items i
    where i.owner = v_owner and i.ns = v_ns and i.key = a_key and (i.expires_at is null or i.expires_at > v_now);
  end if;
  if r.key is not null then
    return next (r.namespace, r.key, r.value, r.created_at, r.updated_at, r.expires_at, null)::ai.memory_item;
  end if;
end
$$;
comment on function ai.get_memory(text[], text, boolean) is
  'The caller''s memory item under namespace and key, no row when there is none or it expired. refresh_ttl: an item with a ttl expires that long from now again. AS002 bad argument.';

create or replace function ai.delete_memory(namespace text[], key text)
returns boolean
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_namespace alias for $1;
  a_key alias for $2;
  v_now timestamptz := ai.now();
  v_live boolean;
begin
  perform ai._check_memory_namespace(a_namespace, 'namespace');
  perform ai._check_text(a_key, 'key', 128);
  delete from ai.memory_items i
  where i.owner = ai.current_owner() and i.ns = ai._memory_ns(a_namespace) and i.key = a_key
  returning i.expires_at is null or i.expires_at > v_now into v_live;
  return coalesce(v_live, false);
end
$$;
comment on function ai.delete_memory(text[], text) is
  'Deletes the caller''s memory item under namespace and key; true when there was a live one. AS002 bad argument.';

create or replace function ai.search_memory(namespace_prefix text[] default '{}', filter jsonb default null,
                                            query text default null, max_rows integer default 10, skip integer default 0,
                                            refresh_ttl boolean default false, query_embedding real[] default null,
                                            distance text default 'cosine')
returns setof ai.memory_item
language plpgsql volatile
-- planned per call: the plan depends on the prefix's key range, the filter and the owner's share
-- of the rows; a generic plan (after five calls) knows none of them and, over a large tenant,
-- scanned all of its items under a narrow prefix and sorted every match (bench/memory.sh)
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_prefix alias for $1;
  a_filter alias for $2;
  a_query alias for $3;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_lo text;
  v_hi text;
  v_depth integer;
  v_contains jsonb;
  v_rest jsonb;
  v_path jsonpath;
  v_vars jsonb;
  v_tsq tsquery;
  v_rows ai.memory_item[];
begin
  perform ai._check_memory_namespace(coalesce(a_prefix, '{}'), 'namespace_prefix', true);
  perform ai._check_limit(max_rows, 'max_rows');
  if skip is null or skip < 0 then
    raise exception using errcode = 'AS002', message = format('skip must be 0 or more, not %s', coalesce(skip::text, 'NULL'));
  end if;
  if a_filter is not null then
    perform ai._check_document(a_filter, 'filter', true);
    select f.contains, f.path, f.vars, f.rest into v_contains, v_path, v_vars, v_rest from ai._memory_filter(a_filter) f;
  end if;
  if distance is null or distance not in ('cosine', 'inner_product', 'l2') then
    raise exception using errcode = 'AS002', message = 'distance must be cosine, inner_product or l2';
  end if;
  if query_embedding is not null and (pg_catalog.cardinality(query_embedding) not between 1 and 16000
                                      or pg_catalog.array_position(query_embedding, null) is not null) then
    raise exception using errcode = 'AS002', message = 'query_embedding must be 1 to 16000 numbers, none NULL';
  end if;
  if query_embedding is null and a_query is not null then
    if pg_catalog.octet_length(a_query) > 65536 then
      raise exception using errcode = 'AS003', message = 'query is over 64 KiB';
    end if;
    v_tsq := pg_catalog.websearch_to_tsquery('simple'::regconfig, a_query);
    if pg_catalog.numnode(v_tsq) = 0 then
      v_tsq := null;  -- nothing to search for (empty, or punctuation only): no ranking
    end if;
  end if;
  -- The items under the prefix are one range of the primary key (deploy/memory.sql, "Prefixes").
  v_depth := pg_catalog.cardinality(coalesce(a_prefix, '{}'));
  v_lo := ai._memory_ns(coalesce(a_prefix, '{}'));
  v_hi := ai._memory_ns_end(coalesce(a_prefix, '{}'));

  if query_embedding is not null
     and ai._memory_vector_index(pg_catalog.cardinality(query_embedding), distance) is not null then
    -- pgvector: the nearest candidates of the owner through the HNSW index (iterative scan, so
    -- the owner's rows are found past other owners' nearer ones), then the item filters and the
    -- exact scores. Candidates: at least 1000, or 10 per row asked for.
    perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
    execute pg_catalog.format($q$
      select array_agg(x order by o) from (
        select (i.namespace, i.key, i.value, i.created_at, i.updated_at, i.expires_at, c.score)::ai.memory_item as x,
               row_number() over (order by c.score desc, i.updated_at desc, i.ns, i.key) as o
        from (select n.ns, n.key, pg_catalog.max(ai._memory_similarity(n.embedding, $2, $8)) as score
              from (select v.ns, v.key, v.embedding from ai.memory_vectors v
                    where v.owner = $1 and pg_catalog.cardinality(v.embedding) = %1$s
                    order by (v.embedding::%3$s.vector(%1$s)) operator(%3$s.%2$s) ($2::%3$s.vector(%1$s))
                    limit greatest(1000, ($4 + $5) * 10)) n  -- greatest is syntax, not a function of pg_catalog
              group by n.ns, n.key) c
        join ai.memory_items i on i.owner = $1 and i.ns = c.ns and i.key = c.key
        where ($9 = 0 or i.namespace[1:$9] = $3)
          and (i.expires_at is null or i.expires_at > $6)
          and ($11::jsonpath is null or pg_catalog.jsonb_path_exists(i.value, $11, $12, true))
          and ($7::jsonb is null or ai._memory_passes(i.value, $7))
          and ($10::jsonb is null or i.value @> $10)
        order by c.score desc, i.updated_at desc, i.ns, i.key
        limit $4 offset $5) t
      $q$, pg_catalog.cardinality(query_embedding),
      case distance when 'l2' then '<->' when 'inner_product' then '<#>' else '<=>' end,
      (select e.extnamespace::regnamespace::text from pg_catalog.pg_extension e where e.extname = 'vector'))
    into v_rows
    using v_owner, query_embedding, coalesce(a_prefix, '{}'), max_rows, skip, v_now, v_rest, distance, v_depth, v_contains,
          v_path, v_vars;
  elsif query_embedding is not null then
    select array_agg(t.x order by t.score desc, t.updated_at desc, t.ns, t.key) into v_rows from (
      select (i.namespace, i.key, i.value, i.created_at, i.updated_at, i.expires_at, s.score)::ai.memory_item as x,
             s.score, i.updated_at, i.ns, i.key
      from ai.memory_items i
      cross join lateral (select pg_catalog.max(ai._memory_similarity(v.embedding, query_embedding, distance)) as score
                          from ai.memory_vectors v
                          where v.owner = i.owner and v.ns = i.ns and v.key = i.key
                            and pg_catalog.cardinality(v.embedding) = pg_catalog.cardinality(query_embedding)) s
      where i.owner = v_owner and i.ns >= v_lo and (v_hi is null or i.ns < v_hi)
        and (v_depth = 0 or i.namespace[1:v_depth] = a_prefix)  -- a constant true without a prefix: no guessed selectivity
        and (i.expires_at is null or i.expires_at > v_now)
        and (v_contains is null or i.value @> v_contains)
        and (v_path is null or pg_catalog.jsonb_path_exists(i.value, v_path, v_vars, true))
        and (v_rest is null or ai._memory_passes(i.value, v_rest))
        and s.score is not null
      order by s.score desc, i.updated_at desc, i.ns, i.key
      limit max_rows offset skip) t;
  elsif v_tsq is not null then
    -- The newest matches first (as the filtered searches read them: the owner's newest-first index
    -- or the prefix's key range, whichever the plan finds cheaper), at most greatest(1000, 10 per
    -- row asked for) of them, as the vector search takes its candidates; those are ranked by
    -- ts_rank, and only the rows returned are built (issue 34 item 8: testing and ranking every
    -- match, about 2 us each, was the cost of the text query: 2,500 matches of a tenant's 2,500
    -- items for a common word, 59,000 of 100,000 at 1 M).
    select array_agg((t.namespace, t.key, t.value, t.created_at, t.updated_at, t.expires_at, t.score)::ai.memory_item
                     order by t.score desc, t.updated_at desc, t.ns, t.key) into v_rows from (
      select c.namespace, c.key, c.value, c.created_at, c.updated_at, c.expires_at, c.ns,
             pg_catalog.ts_rank(c.search_text, v_tsq)::double precision as score
      from (select i.namespace, i.key, i.value, i.created_at, i.updated_at, i.expires_at, i.ns, i.search_text
            from ai.memory_items i
            where i.owner = v_owner and i.ns >= v_lo and (v_hi is null or i.ns < v_hi)
              and (v_depth = 0 or i.namespace[1:v_depth] = a_prefix)  -- a constant true without a prefix: no guessed selectivity
              and (i.expires_at is null or i.expires_at > v_now)
              and (v_contains is null or i.value @> v_contains)
              and (v_path is null or pg_catalog.jsonb_path_exists(i.value, v_path, v_vars, true))
              and (v_rest is null or ai._memory_passes(i.value, v_rest))
              and i.search_text @@ v_tsq
            order by i.updated_at desc, i.ns, i.key
            -- a subquery, so that the plan does not take the limit for all the matches it guesses:
            -- it plans for a tenth of them and walks the newest-first index, stopping at the limit
            -- (given as a number, the prefix's whole range was read and sorted: 2.4x the time)
            limit (select greatest(1000, (max_rows + skip) * 10))) c  -- greatest is syntax, not a function of pg_catalog
      order by 8 desc, c.updated_at desc, c.ns, c.key
      limit max_rows offset skip) t;
  else
    select array_agg(t.x order by t.updated_at desc, t.ns, t.key) into v_rows from (
      select (i.namespace, i.key, i.value, i.created_at, i.updated_at, i.expires_at, null)::ai.memory_item as x,
             i.updated_at, i.ns, i.key
      from ai.memory_items i
      where i.owner = v_owner and i.ns >= v_lo and (v_hi is null or i.ns < v_hi)
        and (v_depth = 0 or i.namespace[1:v_depth] = a_prefix)  -- a constant true without a prefix: no guessed selectivity
        and (i.expires_at is null or i.expires_at > v_now)
        and (v_contains is null or i.value @> v_contains)
        and (v_path is null or pg_catalog.jsonb_path_exists(i.value, v_path, v_vars, true))
        and (v_rest is null or ai._memory_passes(i.value, v_rest))
      order by i.updated_at desc, i.ns, i.key
      limit max_rows offset skip) t;
  end if;

  -- only items with an expiry have a ttl to refresh (LangGraph asks for a refresh on every read)
  if refresh_ttl and exists (select from pg_catalog.unnest(v_rows) r where r.expires_at is not null) then
    -- one statement here; on a Citus formation ai.distribute() makes it two (the new expiries
    -- computed and the rows locked first, then written as values): Citus refuses a STABLE operator
    -- such as timestamptz + interval applied to a column in an UPDATE of a distributed table
    update ai.memory_items i set expires_at = v_now + i.ttl
    from pg_catalog.unnest(v_rows) r
    where i.owner = v_owner and i.ns = ai._memory_ns(r.namespace) and i.key = r.key and i.ttl is not null;
    return query select r.namespace, r.key, r.value, r.created_at, r.updated_at,
                        coalesce(v_now + i.ttl, r.expires_at), r.score
                 from pg_catalog.unnest(v_rows) with ordinality as r(namespace, key, value, created_at, updated_at, expires_at, score, o)
                 join ai.memory_items i on i.owner = v_owner and i.ns = ai._memory_ns(r.namespace) and i.key = r.key
                 order by r.o;
    return;
  end if;
  return query select * from pg_catalog.unnest(v_rows);
end
$$;
comment on function ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text) is
  'The caller''s live memory items under a namespace prefix (whole labels; empty: all) that pass a filter, at most max_rows after skipping skip. With query_embedding: nearest first by the best of the item''s field embeddings (distance cosine, inner_product or l2; score = similarity), items without embeddings left out. Else with query: full-text matches only, best ts_rank first (score) among the newest greatest(1000, 10 x (max_rows + skip)) matches. Else newest update first (score NULL). refresh_ttl extends the ttl of the items returned. AS002 bad argument or filter operator, AS003 filter over 1 MiB.';

create or replace function ai.list_memory_namespaces(prefix text[] default null, suffix text[] default null,
                                                     max_depth integer default null, max_rows integer default 100,
                                                     skip integer default 0)
returns setof text[]
language plpgsql stable
set plan_cache_mode = force_custom_plan  -- the prefix's key range, as ai.search_memory
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_prefix alias for $1;
  a_suffix alias for $2;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_fixed text[];
  v_lo text := '';
  v_hi text;
begin
  perform ai._check_memory_namespace(coalesce(a_prefix, '{}'), 'prefix', true);
  perform ai._check_memory_namespace(coalesce(a_suffix, '{}'), 'suffix', true);
  perform ai._check_limit(max_rows, 'max_rows');
  if skip is null or skip < 0 then
    raise exception using errcode = 'AS002', message = format('skip must be 0 or more, not %s', coalesce(skip::text, 'NULL'));
  end if;
  if max_depth is not null and max_depth < 1 then
    raise exception using errcode = 'AS002', message = format('max_depth must be 1 or more, not %s', max_depth);
  end if;
  -- the labels of the prefix before its first wildcard bound the range read
  v_fixed := a_prefix[1:coalesce(pg_catalog.array_position(a_prefix, '*') - 1, pg_catalog.cardinality(a_prefix))];
  if pg_catalog.cardinality(v_fixed) > 0 then
    v_lo := ai._memory_ns(v_fixed);
    v_hi := ai._memory_ns_end(v_fixed);
  end if;
  return query
    select distinct case when max_depth is null then i.namespace else i.namespace[1:max_depth] end as n
    from ai.memory_items i
    where i.owner = v_owner and i.ns >= v_lo and (v_hi is null or i.ns < v_hi)
      and (i.expires_at is null or i.expires_at > v_now)
      and ai._memory_labels_match(i.namespace, a_prefix, false)
      and ai._memory_labels_match(i.namespace, a_suffix, true)
    order by n
    limit max_rows offset skip;
end
$$;
comment on function ai.list_memory_namespaces(text[], text[], integer, integer, integer) is
  'The distinct namespaces of the caller''s live memory items that start with prefix and end with suffix (''*'' matches any one label), cut to max_depth labels, in order, at most max_rows after skipping skip. AS002 bad argument.';

create or replace function ai.sweep_memory(batch_size integer default 1000)
returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_deleted integer;
  -- read once, on the caller's node: in the query, a Citus shard would read its own wall clock
  v_now timestamptz := ai.now();
  v_owner text := case when not ai.sees_all_owners() then ai.current_owner() end;
  v_count integer;
begin
  perform ai._check_limit(batch_size, 'batch_size');
  v_deleted := 0;
  -- One bounded batch, oldest expiry first; rows another sweeper holds are left to it. The owners
  -- of the batch's oldest expired items first (unlocked), then each owner's oldest, locked with
  -- SKIP LOCKED and deleted: a statement that names its owner runs on that owner's shard of a
  -- Citus formation, where a row lock is allowed (not across shards). Acting for one owner: that
  -- owner's items only (row level security says so too).
  for v_owner in select distinct o.owner
                 from (select i.owner from ai.memory_items i
                       where i.expires_at <= v_now and (v_owner is null or i.owner = v_owner)
                       order by i.expires_at
                       limit batch_size) o loop
    with expired as (
      select i.owner, i.ns, i.key from ai.memory_items i
      where i.owner = v_owner and i.expires_at <= v_now
      order by i.expires_at
      limit batch_size - v_deleted
      for update skip locked
    )
    delete from ai.memory_items i using expired e
    where i.owner = e.owner and i.ns = e.ns and i.key = e.key;
    get diagnostics v_count = row_count;
    v_deleted := v_deleted + v_count;
    exit when v_deleted >= batch_size;
  end loop;
  return v_deleted;
end
$$;
comment on function ai.sweep_memory(integer) is
  'Deletes up to batch_size expired memory items (of every owner the caller sees: all of them for ai_service acting for nobody) and returns how many; call it until it returns less than batch_size. Reads never return expired items, swept or not. AS002 bad argument.';

-- Archive (deploy/memory.sql, "Archive"). Both functions act for ai.current_owner() on the items
-- under a namespace prefix (whole labels; '{}': all of the owner's), a bounded batch per call in
-- key order: call until the count is less than max_items. The picked rows are locked (FOR
-- UPDATE: a put in flight is waited for, not skipped, so a short count means nothing is left).
-- Nothing is deleted before its copy is in, in the same transaction; the counts are compared,
-- and a difference rolls the whole batch back. (unnest of two arrays is syntax, not a function of
-- pg_catalog: it is written unqualified.)
create or replace function ai.archive_memory(namespace_prefix text[] default '{}', max_items integer default 1000)
returns integer
language plpgsql volatile
set plan_cache_mode = force_custom_plan  -- the prefix's key range, as ai.search_memory
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_prefix alias for $1;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_depth integer := pg_catalog.cardinality(coalesce(a_prefix, '{}'));
  v_lo text;
  v_hi text;
  v_ns text[];
  v_keys text[];
  v_copied integer;
  v_deleted integer;
begin
  perform ai._check_memory_namespace(coalesce(a_prefix, '{}'), 'namespace_prefix', true);
  perform ai._check_limit(max_items, 'max_items');
  v_lo := ai._memory_ns(coalesce(a_prefix, '{}'));
  v_hi := ai._memory_ns_end(coalesce(a_prefix, '{}'));
  -- live items only: an expired one no longer exists for any read, and the sweep takes it
  select pg_catalog.array_agg(p.ns order by p.ns, p.key), pg_catalog.array_agg(p.key order by p.ns, p.key) into v_ns, v_keys
  from (select i.ns, i.key from ai.memory_items i
        where i.owner = v_owner and i.ns >= v_lo and (v_hi is null or i.ns < v_hi)
          and (v_depth = 0 or i.namespace[1:v_depth] = a_prefix)  -- a constant true without a prefix: no guessed selectivity
          and (i.expires_at is null or i.expires_at > v_now)
        order by i.ns, i.key
        limit max_items
        for update) p;
  if v_ns is null then
    return 0;
  end if;
  -- an older archived copy of the same key gives way to the newer item (as a put replaces one)
  delete from ai_archive.memory_items a using unnest(v_ns, v_keys) p(ns, key)
  where a.owner = v_owner and a.ns = p.ns and a.key = p.key;
  insert into ai_archive.memory_items (owner, namespace, ns, key, value, created_at, updated_at, ttl, expires_at, search_text)
  select i.owner, i.namespace, i.ns, i.key, i.value, i.created_at, i.updated_at, i.ttl, i.expires_at, i.search_text
  from ai.memory_items i join unnest(v_ns, v_keys) p(ns, key) on i.owner = v_owner and i.ns = p.ns and i.key = p.key;
  get diagnostics v_copied = row_count;
  insert into ai_archive.memory_vectors (owner, ns, key, field, embedding)
  select v.owner, v.ns, v.key, v.field, v.embedding
  from ai.memory_vectors v join unnest(v_ns, v_keys) p(ns, key) on v.owner = v_owner and v.ns = p.ns and v.key = p.key;
  -- the copies are in; the cascade takes the hot embeddings with their items
  delete from ai.memory_items i using unnest(v_ns, v_keys) p(ns, key)
  where i.owner = v_owner and i.ns = p.ns and i.key = p.key;
  get diagnostics v_deleted = row_count;
  if v_deleted <> v_copied or v_copied <> pg_catalog.cardinality(v_keys) then
    raise exception using errcode = 'XX000',
      message = format('archive_memory copied %s items and would delete %s of %s picked: nothing moved', v_copied, v_deleted, pg_catalog.cardinality(v_keys));
  end if;
  return v_deleted;
end
$$;
comment on function ai.archive_memory(text[], integer) is
  'Moves up to max_items of the caller''s live memory items under a namespace prefix (whole labels; empty: all), in key order, with their embeddings, into ai_archive (an older archived copy of a key gives way), deleting each only once it is copied; returns how many. Call it until it returns less than max_items. For the owner, or ai_service acting for one (ai.act_as). AS002 bad argument.';

create or replace function ai.restore_memory(namespace_prefix text[] default '{}', max_items integer default 1000,
                                             out restored integer, out superseded integer)
language plpgsql volatile
set plan_cache_mode = force_custom_plan  -- the prefix's key range, as ai.search_memory
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_prefix alias for $1;
  v_owner text := ai.current_owner();
  v_now timestamptz := ai.now();
  v_depth integer := pg_catalog.cardinality(coalesce(a_prefix, '{}'));
  v_lo text;
  v_hi text;
  v_ns text[];
  v_keys text[];
  v_back_ns text[];
  v_back_keys text[];
begin
  perform ai._check_memory_namespace(coalesce(a_prefix, '{}'), 'namespace_prefix', true);
  perform ai._check_limit(max_items, 'max_items');
  v_lo := ai._memory_ns(coalesce(a_prefix, '{}'));
  v_hi := ai._memory_ns_end(coalesce(a_prefix, '{}'));
  select pg_catalog.array_agg(p.ns order by p.ns, p.key), pg_catalog.array_agg(p.key order by p.ns, p.key) into v_ns, v_keys
  from (select a.ns, a.key from ai_archive.memory_items a
        where a.owner = v_owner and a.ns >= v_lo and (v_hi is null or a.ns < v_hi)
          and (v_depth = 0 or a.namespace[1:v_depth] = a_prefix)
        order by a.ns, a.key
        limit max_items
        for update) p;
  if v_ns is null then
    restored := 0;
    superseded := 0;
    return;
  end if;
  -- A hot item of the same key: an expired one does not exist and gives way; a live one was
  -- written after the archive and stays (as a put replaces an item), the archived copy dropped.
  delete from ai.memory_items i using unnest(v_ns, v_keys) p(ns, key)
  where i.owner = v_owner and i.ns = p.ns and i.key = p.key and i.expires_at <= v_now;
  with back as (
    insert into ai.memory_items as i (owner, namespace, key, value, created_at, updated_at, ttl, expires_at, search_text)
    select a.owner, a.namespace, a.key, a.value, a.created_at, a.updated_at, a.ttl, a.expires_at, a.search_text
    from ai_archive.memory_items a join unnest(v_ns, v_keys) p(ns, key) on a.owner = v_owner and a.ns = p.ns and a.key = p.key
    order by a.ns, a.key
    on conflict (owner, ns, key) do nothing
    returning i.ns, i.key)
  select pg_catalog.array_agg(b.ns), pg_catalog.array_agg(b.key) into v_back_ns, v_back_keys from back b;
  insert into ai.memory_vectors (owner, ns, key, field, embedding)
  select v.owner, v.ns, v.key, v.field, v.embedding
  from ai_archive.memory_vectors v join unnest(v_back_ns, v_back_keys) p(ns, key)
    on v.owner = v_owner and v.ns = p.ns and v.key = p.key;
  delete from ai_archive.memory_items a using unnest(v_ns, v_keys) p(ns, key)
  where a.owner = v_owner and a.ns = p.ns and a.key = p.key;
  restored := coalesce(pg_catalog.cardinality(v_back_keys), 0);
  superseded := pg_catalog.cardinality(v_keys) - restored;
end
$$;
comment on function ai.restore_memory(text[], integer) is
  'Moves up to max_items of the caller''s archived memory items under a namespace prefix (whole labels; empty: all), in key order, back into the hot tables as they were (value, created and updated times, ttl and expiry, search text, embeddings); returns how many were restored and how many were superseded (a live item of that key was written since: it stays, the archived copy is dropped). Call it until restored + superseded is less than max_items. For the owner, or ai_service acting for one (ai.act_as). AS002 bad argument.';

create or replace function ai.create_memory_vector_index(dims integer, distance text default 'cosine')
returns text
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_name text;
  v_schema text;
begin
  if dims is null or dims not between 1 and 2000 then
    raise exception using errcode = 'AS002', message = format('dims must be between 1 and 2000 (HNSW''s limit), not %s', dims);
  end if;
  if distance is null or distance not in ('cosine', 'inner_product', 'l2') then
    raise exception using errcode = 'AS002', message = 'distance must be cosine, inner_product or l2';
  end if;
  if not exists (select from pg_catalog.pg_extension e where e.extname = 'vector') then
    raise exception using errcode = 'AS002', message = 'pgvector is not installed in this database',
      hint = 'CREATE EXTENSION vector (a superuser, or a trusted extension on a managed server); without it the search is exact';
  end if;
  v_name := format('memory_vectors_hnsw_%s_%s', distance, dims);
  select e.extnamespace::regnamespace::text into v_schema from pg_catalog.pg_extension e where e.extname = 'vector';
  -- dims and the operator class come from the checks above, not from the caller's text
  execute format('create index if not exists %I on ai.memory_vectors using hnsw ((embedding::%s.vector(%s)) %s.%s) where pg_catalog.cardinality(embedding) = %s',
                 v_name, v_schema, dims, v_schema,
                 case distance when 'l2' then 'vector_l2_ops' when 'inner_product' then 'vector_ip_ops' else 'vector_cosine_ops' end,
                 dims);
  return v_name;
end
$$;
comment on function ai.create_memory_vector_index(integer, text) is
  'ai_service: builds (if absent) pgvector''s HNSW index over the memory embeddings of length dims for a distance (cosine, inner_product, l2), through which ai.search_memory then finds the nearest candidates; returns its name. AS002 bad argument or pgvector not installed.';

create or replace function ai.batch_memory(ops jsonb)
returns jsonb
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_op jsonb;
  v_kind text;
  v_results jsonb[] := '{}'::jsonb[];
  v_result jsonb;
begin
  if ops is null or pg_catalog.jsonb_typeof(ops) <> 'array' then
    raise exception using errcode = 'AS002', message = 'ops must be a JSON array of operations';
  end if;
  if pg_catalog.jsonb_array_length(ops) > 1000 then
    raise exception using errcode = 'AS002',
      message = format('a batch holds at most 1000 operations, not %s', pg_catalog.jsonb_array_length(ops));
  end if;
  for v_op in select o from pg_catalog.jsonb_array_elements(ops) with ordinality as a(o, i) order by i loop
    if pg_catalog.jsonb_typeof(v_op) <> 'object' then
      raise exception using errcode = 'AS002', message = 'each operation must be a JSON object';
    end if;
    v_kind := v_op ->> 'op';
    case v_kind
      when 'get' then
        select pg_catalog.to_jsonb(g) into v_result
        from ai.get_memory(ai._memory_labels(v_op -> 'namespace', 'namespace'), v_op ->> 'key',
                           coalesce((v_op ->> 'refresh_ttl')::boolean, false)) g;
      when 'put' then
        if v_op -> 'value' is null or v_op -> 'value' = 'null'::jsonb then
          perform ai.delete_memory(ai._memory_labels(v_op -> 'namespace', 'namespace'), v_op ->> 'key');
        else
          perform ai.put_memory(ai._memory_labels(v_op -> 'namespace', 'namespace'), v_op ->> 'key', v_op -> 'value',
                                pg_catalog.make_interval(secs => (v_op ->> 'ttl_seconds')::double precision),
                                ai._memory_labels(v_op -> 'index_texts', 'index_texts'), nullif(v_op -> 'embeddings', 'null'));
        end if;
        v_result := null;
      when 'search' then
        select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(s)), '[]') into v_result
        from ai.search_memory(coalesce(ai._memory_labels(v_op -> 'namespace_prefix', 'namespace_prefix'), '{}'),
                              nullif(v_op -> 'filter', 'null'), v_op ->> 'query',
                              coalesce((v_op ->> 'limit')::integer, 10), coalesce((v_op ->> 'offset')::integer, 0),
                              coalesce((v_op ->> 'refresh_ttl')::boolean, false),
                              (select array_agg(n::text::real order by i)
                               from pg_catalog.jsonb_array_elements(nullif(v_op -> 'query_embedding', 'null')) with ordinality as e(n, i)),
                              coalesce(v_op ->> 'distance', 'cosine')) s;
      when 'list_namespaces' then
        select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(n)), '[]') into v_result
        from ai.list_memory_namespaces(ai._memory_labels(v_op -> 'prefix', 'prefix'), ai._memory_labels(v_op -> 'suffix', 'suffix'),
                                       (v_op ->> 'max_depth')::integer, coalesce((v_op ->> 'limit')::integer, 100),
                                       coalesce((v_op ->> 'offset')::integer, 0)) n;
      else
        raise exception using errcode = 'AS002',
          message = format('unknown operation %s (get, put, search, list_namespaces)', coalesce(v_kind, 'NULL'));
    end case;
    v_results := v_results || coalesce(v_result, 'null'::jsonb);
  end loop;
  return pg_catalog.to_jsonb(v_results);
end
$$;
comment on function ai.batch_memory(jsonb) is
  'Runs memory operations in order in one call and one transaction, and returns their results in order as a JSON array: {"op":"get",namespace,key,refresh_ttl} -> the item or null; {"op":"put",namespace,key,value (null deletes),ttl_seconds,index_texts,embeddings} -> null; {"op":"search",namespace_prefix,filter,query,limit,offset,refresh_ttl,query_embedding,distance} -> an array of items; {"op":"list_namespaces",prefix,suffix,max_depth,limit,offset} -> an array of namespaces. At most 1000 operations. AS002 bad argument, AS003 too large.';

revoke execute on function ai._check_memory_namespace(text[], text, boolean), ai._memory_filter(jsonb), ai._memory_passes(jsonb, jsonb),
  ai._memory_compare(jsonb, text, jsonb), ai._memory_similarity(real[], real[], text),
  ai._memory_embeddings(jsonb), ai._memory_vector_index(integer, text), ai._memory_labels(jsonb, text), ai._memory_labels_match(text[], text[], boolean),
  ai._memory_ns_end(text[]) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

revoke execute on function ai.put_memory(text[], text, jsonb, interval, text[], jsonb), ai.get_memory(text[], text, boolean),
  ai.delete_memory(text[], text), ai.archive_memory(text[], integer), ai.restore_memory(text[], integer), ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text),
  ai.list_memory_namespaces(text[], text[], integer, integer, integer), ai.sweep_memory(integer),
  ai.batch_memory(jsonb), ai.create_memory_vector_index(integer, text) from public;
grant execute on function ai.put_memory(text[], text, jsonb, interval, text[], jsonb), ai.get_memory(text[], text, boolean),
  ai.delete_memory(text[], text), ai.archive_memory(text[], integer), ai.restore_memory(text[], integer), ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text),
  ai.list_memory_namespaces(text[], text[], integer, integer, integer),
  ai.batch_memory(jsonb) to ai_user, ai_service;
grant execute on function ai.sweep_memory(integer), ai.create_memory_vector_index(integer, text) to ai_service;

commit;
