-- Deploy agent-state:errors to pg
-- requires: roles
--
-- Every domain failure raises a custom SQLSTATE of class AS, so a client in any language can
-- branch on the code instead of parsing messages. This table is the one list; docs/errors.md
-- and the Python exception map are checked against it by the tests. Later changes add their
-- own rows, each change in its own range: checkpoints AS020-AS029, side_effects AS030-AS031,
-- human_in_the_loop AS032-AS039, compaction AS040, retention AS041-AS049, streams AS050-AS059,
-- checkpoint_deltas AS060-AS069, distribution AS070-AS079 (the queue raises the general codes of this change, AS004 and
-- AS006; tests/python/test_docs_facts.py holds each change's rows to its range here). Postgres'
-- own codes still apply where they fit (22P05 for a NUL character in a JSON string, which
-- Postgres rejects before any function runs). Only the comments of this released script change
-- (issue 22); its statements are those of v0.1.0.
begin;

create table ai.error_codes (
  sqlstate text primary key check (sqlstate ~ '^AS[0-9]{3}$'),
  name text not null unique check (name ~ '^[a-z][a-z_]*$'),
  description text not null
);
comment on table ai.error_codes is 'The custom SQLSTATEs agent-state raises, with their names and meanings.';

insert into ai.error_codes (sqlstate, name, description) values
  ('AS001', 'not_found', 'The thread (or other object) does not exist, or belongs to another tenant: the two are never told apart.'),
  ('AS002', 'invalid_argument', 'An argument is NULL where a value is required, empty, too long, or not one of the allowed values.'),
  ('AS003', 'too_large', 'A value is larger than its documented limit (a JSON document or a stream''s text 1 MiB; a checkpoint, channel value or pending write 16 MiB).'),
  ('AS004', 'invalid_transition', 'The requested status change is not allowed from the current status, or the session is finished.'),
  ('AS005', 'conflict', 'An idempotency key was reused with different content, or an id is already taken.'),
  ('AS006', 'lease_lost', 'The fencing token is stale, the lease expired, or the job is no longer held by the caller.'),
  ('AS007', 'permission_denied', 'The caller may not do this, e.g. act for another owner without being a member of ai_service.'),
  ('AS008', 'not_an_owner', 'The caller (after SET ROLE) or the acting owner is a role that cannot log in (ai_user, ai_service, any group role): it is never an owner identity.');

-- Reference data that only the schema owner reads (its functions, the tests; no grant below).
-- RLS is on as on every table, with a policy that lets every row through: who may read or write
-- is decided by the grants alone (only the schema owner, whose later changes add their codes; a
-- forced select-only policy would refuse even the owner).
alter table ai.error_codes enable row level security;
alter table ai.error_codes force row level security;
create policy error_codes_all_rows on ai.error_codes using (true) with check (true);
-- No grant: the list is in docs/errors.md; the schema owner reads it (tests compare the two).

-- The guards every public function runs before it writes. They raise the documented codes.

-- The largest JSON document (message content, event payload, config) accepted, in bytes.
create function ai._max_document_bytes() returns integer
language sql immutable parallel safe
as $$ select 1048576 $$;
comment on function ai._max_document_bytes() is 'Internal: the largest JSON document accepted (1 MiB).';

create function ai._check_text(value text, argument text, max_length integer default 255)
returns void
language plpgsql immutable parallel safe
as $$
begin
  if value is null then
    raise exception using errcode = 'AS002', message = format('%s must not be NULL', argument);
  end if;
  if value = '' then
    raise exception using errcode = 'AS002', message = format('%s must not be empty', argument);
  end if;
  if pg_catalog.char_length(value) > max_length then
    raise exception using errcode = 'AS002',
      message = format('%s is longer than %s characters', argument, max_length);
  end if;
end
$$;
comment on function ai._check_text(text, text, integer) is 'Internal guard: raises AS002 when a required text argument is NULL, empty or too long.';

create function ai._check_document(value jsonb, argument text, must_be_object boolean default false)
returns void
language plpgsql immutable parallel safe
as $$
begin
  if value is null then
    raise exception using errcode = 'AS002', message = format('%s must not be NULL', argument);
  end if;
  if must_be_object and pg_catalog.jsonb_typeof(value) <> 'object' then
    raise exception using errcode = 'AS002',
      message = format('%s must be a JSON object, not %s', argument, pg_catalog.jsonb_typeof(value));
  end if;
  if pg_catalog.pg_column_size(value) > ai._max_document_bytes() then
    raise exception using errcode = 'AS003',
      message = format('%s is %s bytes, over the limit of %s', argument,
                       pg_catalog.pg_column_size(value), ai._max_document_bytes());
  end if;
end
$$;
comment on function ai._check_document(jsonb, text, boolean) is 'Internal guard: raises AS002 for a NULL (or non-object) document and AS003 for one over the size limit.';

create function ai._check_limit(value integer, argument text, max_value integer default 10000)
returns void
language plpgsql immutable parallel safe
as $$
begin
  if value is null or value < 1 or value > max_value then
    raise exception using errcode = 'AS002',
      message = format('%s must be between 1 and %s, not %s', argument, max_value, coalesce(value::text, 'NULL'));
  end if;
end
$$;
comment on function ai._check_limit(integer, text, integer) is 'Internal guard: raises AS002 unless a row limit is between 1 and its maximum.';

revoke execute on function ai._max_document_bytes(), ai._check_text(text, text, integer),
  ai._check_document(jsonb, text, boolean), ai._check_limit(integer, text, integer) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

commit;
