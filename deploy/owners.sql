-- Deploy agent-state:owners to pg
-- Reworked after v0.1.0; the tagged script is deploy/owners@v0.1.0.sql.
-- requires: roles
-- requires: errors
--
-- Who is calling. Every function a tenant or a service calls to read or write rows is SECURITY
-- DEFINER: it runs as the schema owner, so no caller needs (or holds) a privilege on any table
-- (docs/security.md). Inside such a function current_user is the schema owner, so the caller's
-- identity cannot come from it. It comes from what a SECURITY DEFINER call does not change:
--   * the setting "role", which SET ROLE writes. Postgres lets a session set it only to a role its
--     login role is a member of, and refuses to set it inside a SECURITY DEFINER function;
--   * otherwise the login role, session_user (only a superuser can change it).
-- That is ai.calling_role(): the role the session acts as outside any function. It refuses a role
-- that cannot log in (ai_user, ai_service and every other group role) with AS008, so a tenant that
-- runs SET ROLE ai_user does not become one identity shared by every tenant.
-- A tenant is its calling role (owner = that name). A trusted back-end (member of ai_service)
-- either acts for one end user it has authenticated, after ai.act_as(owner), or, with no acting
-- owner set, sees every tenant (workers claim across tenants). A plain role cannot impersonate
-- anyone: ai.acting_owner is honoured only for members of ai_service.
-- An acting owner lives for one transaction. ai.act_as sets ai.acting_owner transaction-locally
-- together with ai.acting_xact, the start time of the transaction it was called in
-- (transaction_timestamp(), as an epoch), and the owner counts only while that mark is the
-- current transaction's. A session-wide acting owner (a v0.1.0 act_as(owner, false), or a SET by
-- hand) would stay on the server connection, which a transaction pooler hands to the next client
-- of the role: that client would act for the first one's end user. act_as refuses the
-- session-wide form (AS002), and a value left by an earlier transaction is ignored.
-- On a Citus formation (docs/scaling.md) a SECURITY DEFINER function that reads or writes a
-- distributed table reaches the shards through connections Citus opens as the schema owner, where
-- session_user is the owner: the identity would be the owner's, which no tenant row matches. So
-- when the citus library is loaded, ai.current_owner and ai.sees_all_owners ask
-- ai._formation_caller (deploy/distribution.sql): on the caller's node it carries the calling role
-- and the acting owner to the shards (a SET LOCAL that Citus propagates, signed with a secret only
-- the schema owner reads); on a connection as the schema owner it returns that carried identity,
-- and refuses (AS070) when none or a forged one came: never the owner's own. Without Citus the
-- branch costs one current_setting.
-- Policies call ai.current_owner() and ai.sees_all_owners() through (select ...), which Postgres
-- evaluates once per statement.
-- ai.calling_role, ai.current_owner and ai.sees_all_owners carry no SET search_path: every
-- function and every policy calls them, and a SET clause costs each call a search-path switch
-- (docs/benchmarks.md). Every name, type and operator in their bodies is qualified instead, so
-- a caller's search_path resolves nothing in them.
begin;

-- The functions run as the schema owner, and row level security is what keeps one tenant's rows
-- from another inside them: the owner must be a role RLS applies to (every table forces it on
-- its owner). A superuser or a BYPASSRLS role would see every tenant's rows in every call.
do $$
begin
  if exists (select from pg_catalog.pg_roles r
             where r.rolname operator(pg_catalog.=) current_user and (r.rolsuper or r.rolbypassrls)) then
    raise exception using errcode = '42501',
      message = pg_catalog.format('deploy agent-state as a role that row level security applies to: %I is a superuser or has BYPASSRLS', current_user),
      hint = 'create a role without SUPERUSER and BYPASSRLS that owns the database (docs/security.md) and deploy as it';
  end if;
end
$$;

create or replace function ai.calling_role() returns name
language plpgsql stable parallel safe
as $$
declare
  v_role pg_catalog.name := pg_catalog.current_setting('role');
begin
  -- The login role logged in, so it may (a catalog lookup only after SET ROLE; the names of the
  -- group roles are refused either way).
  if v_role operator(pg_catalog.=) 'none'::pg_catalog.name then
    v_role := session_user;
  elsif not exists (select from pg_catalog.pg_roles r
                    where r.rolname operator(pg_catalog.=) v_role and r.rolcanlogin) then
    v_role := null;
  end if;
  if v_role is null or v_role operator(pg_catalog.=) any ('{ai_user,ai_service}'::pg_catalog.name[]) then
    v_role := coalesce(v_role, pg_catalog.current_setting('role')::pg_catalog.name);
    raise exception using errcode = 'AS008',
      message = pg_catalog.format('role %s cannot log in (a group role such as ai_user or ai_service): it is no owner identity', v_role),
      hint = 'RESET ROLE, or SET ROLE to a login role';
  end if;
  return v_role;
end
$$;
comment on function ai.calling_role() is
  'The role the session acts as outside any function: the role set by SET ROLE, else the login role (session_user); unchanged inside the SECURITY DEFINER functions of schema ai. AS008 for a role that cannot log in (ai_user, ai_service, any group role).';

create or replace function ai.current_owner() returns text
language plpgsql stable parallel safe
as $$
declare
  v_role pg_catalog.name := pg_catalog.current_setting('role');
  v_acting pg_catalog.text;
  v_carried pg_catalog.text[];
begin
  -- ai.calling_role(), inline: this runs in every policy of every statement
  if v_role operator(pg_catalog.=) 'none'::pg_catalog.name then
    v_role := session_user;
  elsif not exists (select from pg_catalog.pg_roles r
                    where r.rolname operator(pg_catalog.=) v_role and r.rolcanlogin) then
    perform ai.calling_role();  -- raises AS008 with its message
  end if;
  -- On a Citus formation (the citus library is loaded), the identity crosses nodes with the
  -- calls: ai._formation_caller carries it from the node the caller is connected to, and on a
  -- shard's connection (made as the schema owner) returns the carried one or refuses (AS070).
  -- (Not when a login calls this function itself, outside the schema owner's functions: nothing
  -- it does then reaches a shard.)
  if pg_catalog.current_setting('citus.version', true) is not null
     and (current_user operator(pg_catalog.<>) v_role
          or pg_catalog.to_regrole(v_role) operator(pg_catalog.=) (select n.nspowner from pg_catalog.pg_namespace n where n.nspname operator(pg_catalog.=) 'ai')) then
    v_carried := ai._formation_caller(v_role);
    if v_carried is not null then
      if v_carried[2] operator(pg_catalog.<>) '' and pg_catalog.pg_has_role(v_carried[1]::pg_catalog.name, 'ai_service', 'MEMBER') then
        return v_carried[2];
      end if;
      return v_carried[1];
    end if;
  end if;
  if pg_catalog.pg_has_role(v_role, 'ai_service', 'MEMBER') then
    v_acting := pg_catalog.current_setting('ai.acting_owner', true);
    if v_acting operator(pg_catalog.<>) ''
       and pg_catalog.current_setting('ai.acting_xact', true) operator(pg_catalog.=)
           (extract(epoch from pg_catalog.transaction_timestamp()))::pg_catalog.text then
      if v_acting operator(pg_catalog.=) any ('{ai_user,ai_service}'::pg_catalog.text[])
         or exists (select from pg_catalog.pg_roles r
                    where r.rolname operator(pg_catalog.=) v_acting::pg_catalog.name and not r.rolcanlogin) then
        raise exception using errcode = 'AS008',
          message = pg_catalog.format('acting owner %s is a role that cannot log in: it is no owner identity', v_acting);
      end if;
      return v_acting;
    end if;
  end if;
  if v_role operator(pg_catalog.=) any ('{ai_user,ai_service}'::pg_catalog.name[]) then
    perform ai.calling_role();  -- raises AS008 with its message
  end if;
  return v_role::pg_catalog.text;
end
$$;
comment on function ai.current_owner() is
  'The tenant the caller acts as: the acting owner set by ai.act_as() in this transaction for members of ai_service, otherwise ai.calling_role(). AS008 when that is a role that cannot log in (ai_user, ai_service, any group role).';

create or replace function ai.sees_all_owners() returns boolean
language plpgsql stable parallel safe
as $$
declare
  v_role pg_catalog.name := pg_catalog.current_setting('role');
  v_carried pg_catalog.text[];
begin
  if v_role operator(pg_catalog.=) 'none'::pg_catalog.name then
    v_role := session_user;
  end if;
  -- a Citus formation: as in ai.current_owner()
  if pg_catalog.current_setting('citus.version', true) is not null
     and (current_user operator(pg_catalog.<>) v_role
          or pg_catalog.to_regrole(v_role) operator(pg_catalog.=) (select n.nspowner from pg_catalog.pg_namespace n where n.nspname operator(pg_catalog.=) 'ai')) then
    v_carried := ai._formation_caller(v_role);
    if v_carried is not null then
      return v_carried[2] operator(pg_catalog.=) '' and pg_catalog.pg_has_role(v_carried[1]::pg_catalog.name, 'ai_service', 'MEMBER');
    end if;
  end if;
  if not pg_catalog.pg_has_role(v_role, 'ai_service', 'MEMBER')
     or (coalesce(pg_catalog.current_setting('ai.acting_owner', true), ''::pg_catalog.text) operator(pg_catalog.<>) ''
         and pg_catalog.current_setting('ai.acting_xact', true) operator(pg_catalog.=)
             (extract(epoch from pg_catalog.transaction_timestamp()))::pg_catalog.text) then
    return false;
  end if;
  perform ai.calling_role();  -- AS008 for a role that cannot log in (SET ROLE ai_service sees nobody)
  return true;
end
$$;
comment on function ai.sees_all_owners() is
  'True for a member of ai_service (by its calling role, ai.calling_role()) that acts for no particular owner: it sees and may change every tenant''s rows. AS008 for such a role that cannot log in.';

create or replace function ai.act_as(owner text, local boolean default true) returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if not pg_catalog.pg_has_role(ai.calling_role(), 'ai_service', 'MEMBER') then
    raise exception using errcode = 'AS007',
      message = pg_catalog.format('role %s may not act for another owner: it is not a member of ai_service', ai.calling_role());
  end if;
  if local is distinct from true then
    raise exception using errcode = 'AS002',
      message = 'ai.act_as acts for the transaction only: local must be true (a session-wide acting owner would stay on the server connection, which a pooler hands to the next client)',
      hint = 'call ai.act_as(owner) in the transaction of the calls it is for (Python: with client.acting_as(owner) as c: ...)';
  end if;
  if owner is not null then
    if owner operator(pg_catalog.=) '' then
      raise exception using errcode = 'AS002', message = 'owner must not be empty';
    end if;
    if pg_catalog.octet_length(owner) operator(pg_catalog.>) 255 then
      -- bytes, not characters: an owner is in index keys beside other text (issue 37); a login
      -- role's name has at most 63 bytes
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('owner is longer than 255 bytes (%s bytes of UTF-8)', pg_catalog.octet_length(owner));
    end if;
    if owner operator(pg_catalog.=) any ('{ai_user,ai_service}'::text[])
       or exists (select from pg_catalog.pg_roles r
                  where r.rolname operator(pg_catalog.=) owner::name and not r.rolcanlogin) then
      raise exception using errcode = 'AS008',
        message = pg_catalog.format('owner %s is a role that cannot log in: it is no owner identity', owner);
    end if;
  end if;
  -- NULL clears the acting owner: the service sees every tenant again. ('' is refused above.)
  -- The mark names this transaction: the owner counts in it only (current_owner, sees_all_owners).
  perform pg_catalog.set_config('ai.acting_xact', (extract(epoch from pg_catalog.transaction_timestamp()))::text, true);
  return pg_catalog.set_config('ai.acting_owner', coalesce(owner, ''), true);
end
$$;
comment on function ai.act_as(text, boolean) is
  'For members of ai_service: act for the given end-user owner until the transaction ends; NULL stops acting. Only in the transaction it is called in: local => false (a session-wide acting owner, which a transaction pooler would hand to the next client) raises AS002, and an ai.acting_owner set any other way is ignored. Raises AS007 for anyone else, AS008 for an owner that is a role that cannot log in (ai_user, ai_service, any group role).';

revoke execute on function ai.calling_role(), ai.current_owner(), ai.sees_all_owners(), ai.act_as(text, boolean) from public;
grant execute on function ai.calling_role(), ai.current_owner(), ai.sees_all_owners(), ai.act_as(text, boolean)
  to ai_user, ai_service;

commit;
