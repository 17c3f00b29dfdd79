-- Deploy agent-state:memory to pg
-- requires: owners
-- requires: clock
-- requires: errors
-- requires: retention
--
-- Long-term memory: what an agent keeps across threads (a user's preferences, facts it learned,
-- summaries), LangGraph's Store in the same schema as the threads. An item is keyed by
-- (owner, namespace, key): the owner is the tenant (ai.current_owner(), so ai.act_as lets a
-- trusted back-end write an end user's memory), the namespace a path of labels (text[], one to
-- 20 labels of 1 to 255 characters, 192 characters in all with one separator between each two),
-- the key a name of 1 to 128 characters; the value is a JSON object of up to 1 MiB.
--
-- Why those lengths: owner, ns and key are the primary key, and with a vector's field (1 to 64
-- characters) the key of ai.memory_vectors. A btree entry holds at most 2,704 bytes, and an
-- index entry is compressed only when it compresses: random text does not. At the maxima, in
-- characters of four bytes (owner 255, namespace 192, key 128, field 64), the widest entry is
-- 2,580 bytes (tests/python/test_index_limits.py stores every documented maximum of every
-- indexed column so, and fails the day a limit outgrows its index). The first version allowed
-- 20 labels of 255 characters and a key of 1,024: documented, and refused by the index (54000).
--
-- Items belong to their owner, not to a thread: they do not move to ai_archive with a thread; an
-- item lives until it is deleted, expires, or its owner archives it.
--
-- Archive. ai_archive.memory_items and ai_archive.memory_vectors are twins of the two tables
-- (the same columns; ns a plain column there, keeping its value): ai.archive_memory moves an
-- owner's live items under a namespace prefix there, copy first and delete after in one
-- statement's transaction, and ai.restore_memory moves them back as they were (value, times,
-- ttl and expiry, search text, embeddings). Same owner column and the same row level security.
--
-- Expiry. expires_at is NULL (never) or the time after which the item no longer exists for any
-- read: every function compares it with ai.now(), so no sweeper is needed for correctness;
-- ai.sweep_memory deletes expired rows in bounded batches to give the space back. ttl is kept
-- beside it so a read can push expires_at to now + ttl again (refresh on read).
--
-- Search. search_text is the tsvector of the item's indexed fields (the whole value's strings by
-- default, chosen fields, or none), ranked by Postgres full-text search ('simple' configuration:
-- no stemming, any language). ai.memory_vectors holds the embeddings of the indexed fields, one
-- row per field, as real[]: nearest neighbours are computed exactly in SQL, or through pgvector's
-- HNSW index when the extension is installed (deploy/memory_functions.sql).
--
-- Prefixes. ns is the namespace's labels joined by the unit separator (U+001F, which no label
-- may hold), in collation "C": the items under a namespace prefix are one range of the primary
-- key, (owner, ns) between prefix and prefix || U+001F ... U+0020.
begin;

-- Whether every label of a namespace is 1 to 255 characters without U+001F (and none is NULL),
-- and the labels joined by U+001F (ns) at most 192 characters, as one expression, inlined where it is called (no query per call or per row). array_to_string
-- leaves NULL labels out, so they are looked for first; a label over 255 characters is a run of
-- 256 characters other than the separator once the labels are joined by it. STABLE, as
-- array_to_string is: Postgres inlines no IMMUTABLE SQL function whose body is less than
-- immutable, and a SQL function called instead of inlined is parsed and planned again in each
-- transaction (some 30 us a put, in its guard and in the row CHECK's function).
create function ai._memory_labels_ok(namespace text[])
returns boolean
language sql stable parallel safe
as $$
  select pg_catalog.array_position(namespace, null) is null
         and pg_catalog.array_position(namespace, '') is null
         and pg_catalog.strpos(pg_catalog.array_to_string(namespace, ''), E'\x1f') = 0
         and pg_catalog.array_to_string(namespace, E'\x1f') !~ '[^\x1f]{255}[^\x1f]'
         and pg_catalog.char_length(pg_catalog.array_to_string(namespace, E'\x1f')) <= 192
$$;
comment on function ai._memory_labels_ok(text[]) is
  'Internal: true when no label of a namespace is NULL, empty, over 255 characters or holding U+001F, and the labels joined by U+001F are at most 192 characters.';

-- The rules of a row (the CHECK of each table is one call of its function): raise 23514 naming
-- the rule; true when none is broken. The public functions test the same limits first and raise
-- AS002 / AS003 with the argument's name (deploy/memory_functions.sql). One PL/pgSQL call per row:
-- a plain expression in the CHECK (as agent_jobs_row_check) measured no cheaper per put once
-- ai._memory_labels_ok is inlined here (bench/memory.sh, docs/benchmarks.md).
create function ai._check_memory_items_row(namespace text[], key text, value jsonb, ttl interval, expires_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if pg_catalog.cardinality(namespace) not between 1 and 20
     or pg_catalog.array_ndims(namespace) <> 1
     or not ai._memory_labels_ok(namespace) then
    raise exception using errcode = '23514', constraint = 'memory_items_row_check',
      message = 'a memory namespace is 1 to 20 labels of 1 to 255 characters, none holding U+001F, 192 characters in all (one separator between each two labels)';
  end if;
  if pg_catalog.char_length(key) not between 1 and 128 then
    raise exception using errcode = '23514', constraint = 'memory_items_row_check',
      message = 'a memory key is 1 to 128 characters';
  end if;
  if pg_catalog.jsonb_typeof(value) is distinct from 'object' then
    raise exception using errcode = '23514', constraint = 'memory_items_row_check',
      message = 'a memory value is a JSON object';
  end if;
  if ttl <= interval '0' then
    raise exception using errcode = '23514', constraint = 'memory_items_row_check',
      message = 'a memory item''s ttl is positive';
  end if;
  if ttl is not null and expires_at is null then
    raise exception using errcode = '23514', constraint = 'memory_items_row_check',
      message = 'a memory item with a ttl has an expiry';
  end if;
  return true;
end
$$;
comment on function ai._check_memory_items_row(text[], text, jsonb, interval, timestamptz) is
  'Internal: the CHECK of ai.memory_items, run for every row written (namespace of 1 to 20 labels of 1 to 255 characters without U+001F, 192 in all, key of 1 to 128 characters, value a JSON object, ttl positive and with an expiry); raises 23514 naming the rule broken, true when none is.';

create function ai._check_memory_vectors_row(field text, embedding real[])
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if pg_catalog.char_length(field) not between 1 and 64 then
    raise exception using errcode = '23514', constraint = 'memory_vectors_row_check',
      message = 'a memory vector''s field is 1 to 64 characters';
  end if;
  if pg_catalog.array_ndims(embedding) is distinct from 1 or pg_catalog.cardinality(embedding) > 16000
     or pg_catalog.array_position(embedding, null) is not null then
    raise exception using errcode = '23514', constraint = 'memory_vectors_row_check',
      message = 'a memory embedding is 1 to 16000 numbers, none NULL';
  end if;
  return true;
end
$$;
comment on function ai._check_memory_vectors_row(text, real[]) is
  'Internal: the CHECK of ai.memory_vectors, run for every row written (field of 1 to 64 characters, embedding of 1 to 16000 numbers, none NULL); raises 23514 naming the rule broken, true when none is.';

-- The namespace's labels joined by U+001F: the generated column ns, and the value the functions
-- compare it with. array_to_string is STABLE only because it may print any element type; for
-- text[] its result depends on nothing but the array. PL/pgSQL, not SQL: a generated column
-- needs an IMMUTABLE function, Postgres inlines no IMMUTABLE SQL function with a STABLE body, and
-- a SQL function that is not inlined is parsed and planned again in every statement that calls
-- it (about 10 us more per put than this one).
create function ai._memory_ns(namespace text[])
returns text
language plpgsql immutable parallel safe strict
as $$ begin return pg_catalog.array_to_string(namespace, E'\x1f'); end $$;
comment on function ai._memory_ns(text[]) is
  'Internal: a namespace''s labels joined by U+001F, the key ai.memory_items is stored and ranged under.';

revoke execute on function ai._memory_labels_ok(text[]), ai._check_memory_items_row(text[], text, jsonb, interval, timestamptz),
  ai._check_memory_vectors_row(text, real[]), ai._memory_ns(text[]) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create table ai.memory_items (
  owner text not null,
  namespace text[] not null,
  ns text collate "C" generated always as (ai._memory_ns(namespace)) stored,
  key text collate "C" not null,
  value jsonb not null,
  created_at timestamptz not null default ai.now(),
  updated_at timestamptz not null default ai.now(),
  ttl interval,
  expires_at timestamptz,
  search_text tsvector,
  primary key (owner, ns, key),
  constraint memory_items_row_check check (ai._check_memory_items_row(namespace, key, value, ttl, expires_at))
);
comment on table ai.memory_items is 'Long-term memory (a LangGraph Store): JSON items keyed by owner, namespace (a path of labels) and key, with an optional expiry.';

create index memory_items_expiry on ai.memory_items (expires_at) where expires_at is not null;
-- A search without a query returns the newest items first: this index is that order for one
-- owner (ties by ns and key, as the search breaks them), so a search over many items stops after
-- the first matches it walks instead of sorting all of them (the planner weighs it against the
-- key range of a narrow prefix).
create index memory_items_newest on ai.memory_items (owner, updated_at desc, ns, key);
create index memory_items_search_text on ai.memory_items using gin (search_text) where search_text is not null;
create index memory_items_value on ai.memory_items using gin (value jsonb_path_ops);

alter table ai.memory_items enable row level security;
alter table ai.memory_items force row level security;
create policy memory_items_by_owner on ai.memory_items
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for any role: the functions (SECURITY DEFINER) are the only way in.

create table ai.memory_vectors (
  owner text not null,
  ns text collate "C" not null,
  key text collate "C" not null,
  field text not null,
  embedding real[] not null,
  primary key (owner, ns, key, field),
  foreign key (owner, ns, key) references ai.memory_items (owner, ns, key) on delete cascade,
  constraint memory_vectors_row_check check (ai._check_memory_vectors_row(field, embedding))
);
comment on table ai.memory_vectors is 'The embeddings of a memory item''s indexed fields, one row per field (real[]; pgvector''s HNSW index reads them when the extension is installed).';

alter table ai.memory_vectors enable row level security;
alter table ai.memory_vectors force row level security;
create policy memory_vectors_by_owner on ai.memory_vectors
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- The archive twins (deploy/retention.sql for the sessions'): the same columns in the same order,
-- ns a plain column (LIKE copies no generation expression), no index but the key.
create table ai_archive.memory_items (like ai.memory_items including defaults including constraints,
  primary key (owner, ns, key));
comment on table ai_archive.memory_items is 'Archived long-term memory items (ai.archive_memory), as they were when archived; ai.restore_memory moves them back.';
create table ai_archive.memory_vectors (like ai.memory_vectors including defaults including constraints,
  primary key (owner, ns, key, field),
  foreign key (owner, ns, key) references ai_archive.memory_items (owner, ns, key) on delete cascade);
comment on table ai_archive.memory_vectors is 'The embeddings of archived memory items.';
alter table ai_archive.memory_items enable row level security;
alter table ai_archive.memory_items force row level security;
create policy memory_items_by_owner on ai_archive.memory_items
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
alter table ai_archive.memory_vectors enable row level security;
alter table ai_archive.memory_vectors force row level security;
create policy memory_vectors_by_owner on ai_archive.memory_vectors
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No grant: ai.archive_memory and ai.restore_memory (SECURITY DEFINER) move the rows.

create type ai.memory_item as (
  namespace text[], key text, value jsonb, created_at timestamptz, updated_at timestamptz,
  expires_at timestamptz, score double precision
);
comment on type ai.memory_item is 'A memory item as the memory functions return it; score is the search rank (NULL without a query).';

commit;
