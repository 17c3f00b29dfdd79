-- Deploy agent-state:distribution to pg
-- requires: schema
-- requires: owners
-- requires: thread_fences
--
-- The data tier on Citus (docs/scaling.md, issue 40). The schema deploys as on one server; an
-- operator then runs `select ai.distribute()` once, as the schema owner, on the coordinator of a
-- Citus formation, and again after any later deploy (it does only what is not done yet). Without
-- the citus extension in the database it changes nothing and says so: a single server keeps
-- every table, policy, key and function exactly as deployed.
--
-- Why a function rather than a sqitch change that distributes: Citus is often added to a
-- database that already holds the schema (and rows), after the deploy; a deploy script runs once,
-- at deploy time. A function runs when the operator moves the database onto a formation, and again
-- after every later deploy, which may add a table that must be distributed too.
--
-- What it does, in order (each step skips what is already done):
--   0. every function of ai and ai_archive made on the workers, but those that take or return a
--      table's row type: a database deployed before `create extension citus` (one server moved
--      onto a formation) has none there, and the shards' checks, defaults and triggers call them;
--   1. the policies of ai and ai_archive without a (select ...) subquery: Citus does not take a
--      subquery in a policy of a distributed table. The same comparisons, evaluated per row on the
--      shard instead of once per statement;
--   2. keys that must hold the distribution column: human_approvals' primary key becomes
--      (thread_id, approval_id) (its id is still a ULID made by the server, unique by itself);
--   3. the queue's foreign keys to the sessions dropped (a coordinator-local table cannot reference
--      a distributed one): enqueue checks the session itself, and delete_thread deletes the
--      thread's jobs explicitly;
--   4. reference tables: the small tables every node reads (ai.error_codes, ai._archived_tables);
--      then two-phase commit between the queue and a worker: ai.formation_two_phase a Citus local
--      table, and a trigger on each table of the queue (ai._formation_two_phase below). It refuses
--      a formation whose coordinator is not in the metadata (AS071): nothing is done there;
--   5. every per-thread table (a thread_id column), in ai and ai_archive, distributed by thread_id
--      and co-located with ai.agent_sessions; the memory store (ai.memory_*, ai_archive.memory_*)
--      by owner, co-located with ai.memory_items;
--   6. the queue's tables (ai.agent_jobs, ai.agent_jobs_archive, ai.job_fences, ai.notify_key,
--      ai.queue_workers, ai.lease_timelines) stay plain tables of the coordinator: a claim scans
--      one ordered index across every thread, which needs one table on one node;
--   7. every SECURITY DEFINER function carries the caller's identity to the shards first
--      (ai._formation_caller below; deploy/owners.sql reads it there); then every delegated one
--      refuses, on a worker, a role that may freeze the test clock (ai._formation_delegated_clock).
-- Rows already there are copied to the shards: the copy runs while the table does not force row
-- level security on its owner (COPY into a table under RLS is refused), in this transaction only.
begin;

-- The errors of this change (deploy/errors.sql: distribution AS070-AS079).
insert into ai.error_codes (sqlstate, name, description) values
  ('AS070', 'identity_not_carried', 'On a Citus formation, a node was reached as the schema owner without the caller''s identity (or with one not signed by this formation): the call is refused rather than run as the owner. Call as a tenant or a service, not as the schema owner (docs/scaling.md).'),
  ('AS071', 'coordinator_not_in_metadata', 'ai.distribute() on a Citus formation whose coordinator is not in its own metadata: the transactions that write the queue (on the coordinator) and a worker could not commit in two phases, so nothing is distributed. A superuser runs citus_set_coordinator_host on the coordinator first (docs/scaling.md).');

-- The secret that signs the identity carried to the shards (ai._formation_caller): made by
-- ai.distribute(), a reference table (every node reads it), read by the schema owner only (no
-- grant to anyone). Empty on one server.
create table ai.formation_secret (
  one boolean primary key default true check (one),
  secret text not null
);
comment on table ai.formation_secret is 'Internal, Citus only: the key that signs the caller''s identity carried from the node a caller is connected to to the shards (ai._formation_caller); one row made by ai.distribute(), read by the schema owner only.';
alter table ai.formation_secret enable row level security;
alter table ai.formation_secret force row level security;
create policy formation_secret_schema_owner on ai.formation_secret using (true) with check (true);  -- no grant to anyone

-- Two-phase commit between the coordinator's queue and a worker (docs/scaling.md, "Atomic across
-- the queue and a worker"). On a formation the queue's tables are plain tables of the coordinator,
-- which Citus does not know: a transaction that writes one of them and a thread's worker (a claim
-- and a finish move the thread's fence; request_human, resolve_human, the cancel of a waiting job,
-- delete_thread, archive and restore write the thread's rows) would commit the worker in one phase
-- in Citus' pre-commit callback and then the coordinator, so a coordinator crash between the two
-- kept the worker's half. Citus commits in two phases (PREPARE TRANSACTION on each worker written,
-- recorded in pg_dist_transaction with the coordinator's own commit, then COMMIT PREPARED; a crash
-- before that commit is rolled back by its recovery) once the transaction modified a table of its
-- own through its local executor. This table is that: a Citus local table, made by
-- ai.distribute() (its one shard on the coordinator, which must be in the metadata), always
-- empty; the trigger below, which ai.distribute() adds to the queue's tables on a formation only,
-- deletes nothing from it once per transaction. A transaction that writes no worker (an enqueue, a
-- renewal) prepares nothing; a node step (a delegated put_checkpoint or append, one worker, no
-- queue table) does not reach the trigger. On one server the table is empty, no trigger
-- uses it, nothing changes. Read and written by the schema owner only (no grant to anyone).
create table ai.formation_two_phase (
  one boolean primary key default true check (one)
);
comment on table ai.formation_two_phase is 'Internal, Citus only: always empty; a Citus local table made by ai.distribute() whose no-op DELETE (ai._formation_two_phase, a trigger of the queue''s tables on a formation) makes a transaction that writes the coordinator''s queue and a worker commit in two phases.';
alter table ai.formation_two_phase enable row level security;
alter table ai.formation_two_phase force row level security;
create policy formation_two_phase_schema_owner on ai.formation_two_phase using (true) with check (true);  -- no grant to anyone

-- The trigger ai.distribute() adds to each table of the queue on a formation (after each row
-- inserted, updated or deleted): the first time in a transaction, a DELETE of the always empty
-- Citus local table, which Citus runs through its local executor, and a modification there turns
-- on two-phase commit for every worker this transaction modifies (before or after this row). Then
-- a transaction-local setting (the transaction's id) says it is done: the rest of the
-- transaction's rows cost a setting's read. Per row rather than per statement: a claim that finds no job (a worker's poll) updates no
-- row and runs nothing. Runs as the writer: the queue's functions run as the schema owner, who
-- owns the table (the superuser too); no tenant writes a queue table itself.
create or replace function ai._formation_two_phase() returns trigger
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  -- the mark is this transaction's id: a value set beforehand (a session's SET) is never it
  if pg_catalog.current_setting('ai.formation_two_phase', true) is distinct from pg_catalog.pg_current_xact_id()::pg_catalog.text then
    delete from ai.formation_two_phase;
    perform pg_catalog.set_config('ai.formation_two_phase', pg_catalog.pg_current_xact_id()::pg_catalog.text, true);
  end if;
  return null;
end
$$;
comment on function ai._formation_two_phase() is
  'Internal trigger, Citus only (ai.distribute() adds it to the queue''s tables): once per transaction a no-op DELETE of the Citus local table ai.formation_two_phase, so that a transaction writing the coordinator''s queue and a worker commits in two phases.';
revoke execute on function ai._formation_two_phase() from public;  -- a trigger needs no grant

-- The formation's secret, read from this node's copy of the reference table (a shard of its
-- own name): a function that runs inside a query Citus sent to a shard may not start another
-- distributed query, which reading the table by its own name would be. NULL before
-- ai.distribute() made it a reference table. Dynamic SQL: the Citus catalog exists on a formation
-- only.
create or replace function ai._formation_secret() returns text
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_shard pg_catalog.text;
  v_secret pg_catalog.text;
  v_shards pg_catalog.text := 'pg_dist_shard';
begin
  -- a database without the citus extension on a server that loads Citus (another database of a
  -- formation's coordinator, or one deployed before the extension): no catalog, no formation
  if not exists (select from pg_catalog.pg_extension e where e.extname = 'citus') then
    return null;
  end if;
  -- Citus' catalog exists on a formation only: plpgsql_check, run on one server, skips this
  perform 'PRAGMA:disable:check';
  execute pg_catalog.format($q$select pg_catalog.shard_name('ai.formation_secret'::pg_catalog.regclass, s.shardid)
                                 from pg_catalog.%I s
                                where s.logicalrelid operator(pg_catalog.=) 'ai.formation_secret'::pg_catalog.regclass$q$,
                            v_shards)
     into v_shard;
  perform 'PRAGMA:enable:check';
  if v_shard is null then
    return null;
  end if;
  execute pg_catalog.format('select f.secret from %s f', v_shard) into v_secret;
  return v_secret;
end
$$;
comment on function ai._formation_secret() is
  'Internal, Citus only: the secret that signs carried identities (ai._formation_caller), from this node''s copy of the reference table ai.formation_secret; NULL before ai.distribute().';

-- The caller's identity across the nodes of a Citus formation; called by ai.current_owner() and
-- ai.sees_all_owners() only when the citus library is loaded.
--   * On a worker, a login that is not the schema owner (a call delegated to the worker that holds
--     its thread, or a login there): nothing is carried; returns NULL (the caller's own identity,
--     as on one server). Its statements run on this worker's shards; one that reaches another node
--     arrives there as the schema owner without an identity, which refuses it (AS070).
--   * On the coordinator, a login that is not the schema owner: the identity is carried. The calling role and
--     the acting owner valid in this transaction (ai.act_as) go, signed, into a SET LOCAL of
--     ai.carried_identity that Citus sends to every node this transaction reaches
--     (citus.propagate_set_commands = local, set here for that one SET LOCAL). Once per transaction
--     and identity (ai.carried_payload remembers it); returns NULL: the caller goes on as on one
--     server.
--   * On a connection as the schema owner (Citus' own, opened for a SECURITY DEFINER function; or
--     an operator logged in as the owner): returns {calling role, acting owner} from
--     ai.carried_identity when its signature is this formation's, and refuses with AS070
--     otherwise. Nothing falls back to the owner's own identity: a row is seen or written as the
--     caller's, or not at all.
-- A tenant may SET LOCAL ai.carried_identity itself: without the secret it cannot sign one, so a
-- shard refuses it; a tenant's own connection to a worker is its own login, whose identity is its
-- own as on one server (the setting is read only on the owner's connections).
create or replace function ai._formation_caller(a_role name) returns text[]
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_owner pg_catalog.name;
  v_token pg_catalog.text;
  v_secret pg_catalog.text;
  v_payload pg_catalog.text;
  v_acting pg_catalog.text := '';
  v_intermediate pg_catalog.text := 'create_intermediate_result';
  v_propagate pg_catalog.text;
  v_local_group pg_catalog.text := 'pg_dist_local_group';
  v_on_worker boolean;
begin
  select n.nspowner::pg_catalog.regrole::pg_catalog.name into v_owner from pg_catalog.pg_namespace n where n.nspname = 'ai';
  if a_role operator(pg_catalog.=) v_owner then
    v_token := pg_catalog.current_setting('ai.carried_identity', true);
    if v_token is null or v_token operator(pg_catalog.=) '' then
      if not exists (select from pg_catalog.pg_extension where extname = 'citus')
         or ai._formation_secret() is null then
        return null;  -- no formation, or not distributed yet: as on one server
      end if;
      raise exception using errcode = 'AS070',
        message = pg_catalog.format('no caller identity reached this node: a connection as the schema owner %I acts for nobody', v_owner),
        hint = 'connect as a tenant or a service (docs/scaling.md)';
    end if;
    if v_token is distinct from pg_catalog.current_setting('ai.carried_verified', true) then
      v_secret := ai._formation_secret();
      v_payload := pg_catalog.left(v_token, -65);
      if v_secret is null
         or pg_catalog.right(v_token, 64) operator(pg_catalog.<>) ai._formation_mac(v_secret, v_payload) then
        raise exception using errcode = 'AS070',
          message = 'the caller identity that reached this node is not signed by this formation';
      end if;
      perform pg_catalog.set_config('ai.carried_verified', v_token, true);
    else
      v_payload := pg_catalog.left(v_token, -65);
    end if;
    return array[v_payload::jsonb ->> 'role', v_payload::jsonb ->> 'acting'];
  end if;
  -- the caller's node: carry
  if pg_catalog.pg_has_role(a_role, 'ai_service', 'MEMBER')
     and pg_catalog.current_setting('ai.acting_owner', true) operator(pg_catalog.<>) ''
     and pg_catalog.current_setting('ai.acting_xact', true) operator(pg_catalog.=)
         (extract(epoch from pg_catalog.transaction_timestamp()))::pg_catalog.text then
    v_acting := pg_catalog.current_setting('ai.acting_owner', true);
    if v_acting operator(pg_catalog.=) any ('{ai_user,ai_service}'::pg_catalog.text[])
       or exists (select from pg_catalog.pg_roles r
                  where r.rolname operator(pg_catalog.=) v_acting::pg_catalog.name and not r.rolcanlogin) then
      raise exception using errcode = 'AS008',
        message = pg_catalog.format('acting owner %s is a role that cannot log in: it is no owner identity', v_acting);
    end if;
  end if;
  v_payload := pg_catalog.jsonb_build_object('role', a_role, 'acting', v_acting)::pg_catalog.text;
  if v_payload is distinct from pg_catalog.current_setting('ai.carried_payload', true) then
    -- a role that cannot log in (SET ROLE ai_user, a group role) is no owner identity: AS008, as
    -- ai.current_owner() says on one server. Not carried: the shards would take it for an owner
    -- (a read that names no owner on the caller's node, get_session, said AS001 instead)
    if a_role operator(pg_catalog.=) any ('{ai_user,ai_service}'::pg_catalog.name[])
       or not exists (select from pg_catalog.pg_roles r where r.rolname operator(pg_catalog.=) a_role and r.rolcanlogin) then
      raise exception using errcode = 'AS008',
        message = pg_catalog.format('role %s cannot log in (a group role such as ai_user or ai_service): it is no owner identity', a_role),
        hint = 'RESET ROLE, or SET ROLE to a login role';
    end if;
    -- on a worker (a call delegated to the worker that holds its thread, or a login there): its
    -- statements run on this node's shards as the caller, and nothing is carried (the carry's
    -- coordinated transaction and signed SET LOCAL were about a quarter of a delegated call's
    -- CPU there). A statement that leaves this node reaches the other as the schema owner without
    -- an identity: AS070 there, never the owner's rows (tests/citus/test_delegation.py).
    if exists (select from pg_catalog.pg_extension e where e.extname = 'citus') then
      perform 'PRAGMA:disable:check';  -- Citus' catalog: see ai._formation_secret
      execute pg_catalog.format('select g.groupid operator(pg_catalog.<>) 0 from pg_catalog.%I g', v_local_group)
         into v_on_worker;
      perform 'PRAGMA:enable:check';
      if v_on_worker then
        perform pg_catalog.set_config('ai.carried_payload', v_payload, true);
        return null;
      end if;
    end if;
    v_secret := ai._formation_secret();
    if v_secret is null then
      return null;  -- not distributed (yet): nothing to carry
    end if;
    v_propagate := pg_catalog.current_setting('citus.propagate_set_commands');
    perform pg_catalog.set_config('citus.propagate_set_commands', 'local', true);
    -- and the shards are reached in transaction blocks, which carry the SET LOCALs: a read outside
    -- a transaction block would go to a worker as a bare statement, without them. Citus opens
    -- them once the transaction is a coordinated one, which an (empty) intermediate result makes it.
    perform 'PRAGMA:disable:check';  -- a function of Citus: see ai._formation_secret
    execute pg_catalog.format($q$select pg_catalog.%I('ai_formation_carry', 'select 1 where false')$q$, v_intermediate);
    perform 'PRAGMA:enable:check';
    -- in a DO block: Citus propagates a SET LOCAL run inside a transaction block, a procedure or
    -- a DO block, and a function called as a plain expression of a statement run outside a
    -- transaction block is none of them
    execute 'do ' operator(pg_catalog.||) pg_catalog.quote_literal(
      'begin set local ai.carried_identity = ' operator(pg_catalog.||) pg_catalog.quote_literal(
        v_payload operator(pg_catalog.||) ' ' operator(pg_catalog.||) ai._formation_mac(v_secret, v_payload))
      operator(pg_catalog.||) '; end');
    -- and back: Citus keeps that SET LOCAL for every node the transaction reaches later, but a SET
    -- LOCAL of the caller's own after this call (SET LOCAL ROLE to another tenant, a timeout) must
    -- not follow it to the workers, where the connection is the owner's (42501 there, "failure on
    -- connection marked as essential": tests/citus/test_set_local.py)
    perform pg_catalog.set_config('citus.propagate_set_commands', v_propagate, true);
    perform pg_catalog.set_config('ai.carried_payload', v_payload, true);
  end if;
  return null;
end
$$;
comment on function ai._formation_caller(name) is
  'Internal, Citus only (called by ai.current_owner and ai.sees_all_owners when the citus library is loaded): on the coordinator carries the caller''s identity (calling role, acting owner), signed, to the shards this transaction reaches (on a worker nothing: a delegated call runs on its own shards there); on a connection as the schema owner returns the carried identity, or raises AS070 when none or an unsigned one came.';

-- The first thing every SECURITY DEFINER function of ai does on a formation (ai.distribute()
-- puts it into their DECLARE section there: a function that touches a distributed table only
-- through row level security never calls ai.current_owner() on the node it runs on, and the shards
-- would otherwise see the owner). On one server no function calls it.
create or replace function ai._formation_carry() returns boolean
language plpgsql volatile
as $$
begin
  perform ai._formation_caller(case when pg_catalog.current_setting('role') operator(pg_catalog.=) 'none'
                                    then session_user
                                    else pg_catalog.current_setting('role')::pg_catalog.name end);
  return true;
end
$$;
comment on function ai._formation_carry() is
  'Internal, Citus only: carries the caller''s identity to the shards (ai._formation_caller), or refuses a connection as the schema owner that carries none (AS070). ai.distribute() makes it the first step of every SECURITY DEFINER function on a formation.';

-- The test clock under delegation (docs/scaling.md, "The test clock under delegation"). ai.now()
-- honours ai.frozen_now for a role that may freeze the clock (deploy/clock.sql: a member of
-- ai_test_clock, a superuser included, where that role exists: test clusters only). A call
-- delegated to the worker that holds its thread (step 6d of ai.distribute()) reads ai.now() on
-- that worker, where a session-level SET ai.frozen_now made on the coordinator never arrives:
-- Citus sends a SET LOCAL of a transaction block only (citus.propagate_set_commands), and a call
-- in a transaction block is not delegated. Nothing on the worker can tell whether the
-- coordinator's session froze the clock (SQL cannot tell a SET from a SET LOCAL, and the
-- coordinator runs nothing of ours for a delegated call), so for such a role the call is refused
-- there (AS072) rather than run on the wall clock unseen; in a transaction block the coordinator
-- reads the clock and sends its values (the Python client sends a refused call again in a form
-- Citus does not delegate). ai.distribute() makes it a step of every delegated function, right
-- after the carry (a variable of its DECLARE section, step 7b of ai._formation_rewrites). A role
-- that may not freeze the clock, every role of a production cluster (no ai_test_clock), and a
-- login on a worker itself (its own session's clock) are never refused; the cheap tests come
-- first: a Citus connection (application_name 'citus_internal gpid=...'), then the role
-- ai_test_clock. No SET search_path: a helper inside the owner's pinned functions,
-- as ai._formation_carry; every name qualified.
create or replace function ai._formation_delegated_clock() returns boolean
language plpgsql volatile
as $$
declare
  v_local_group pg_catalog.text := 'pg_dist_local_group';
  v_on_worker boolean;
begin
  if pg_catalog.current_setting('application_name') not like 'citus\_internal gpid=%'
     or pg_catalog.to_regrole('ai_test_clock') is null
     or pg_catalog.current_setting('ai.frozen_now', true) operator(pg_catalog.<>) ''
     or not pg_catalog.pg_has_role(case when pg_catalog.current_setting('role') operator(pg_catalog.=) 'none'
                                        then session_user
                                        else pg_catalog.current_setting('role')::pg_catalog.name end,
                                   'ai_test_clock', 'MEMBER') then
    return true;
  end if;
  perform 'PRAGMA:disable:check';  -- Citus' catalog: see ai._formation_secret
  execute pg_catalog.format('select g.groupid operator(pg_catalog.<>) 0 from pg_catalog.%I g', v_local_group)
     into v_on_worker;
  perform 'PRAGMA:enable:check';
  if not coalesce(v_on_worker, false) then
    return true;
  end if;
  raise exception using errcode = 'AS072',
    message = pg_catalog.format('a call delegated to a worker cannot see a clock frozen on the coordinator: role %s may freeze the clock (ai_test_clock)',
                                case when pg_catalog.current_setting('role') operator(pg_catalog.=) 'none'
                                     then session_user
                                     else pg_catalog.current_setting('role')::pg_catalog.name end),
    detail = 'a session-level SET ai.frozen_now on the coordinator does not reach the worker that runs a delegated call, and the worker cannot tell whether one was made',
    hint = 'call it in a transaction block (the coordinator then reads the clock), or as a role that is not a member of ai_test_clock (docs/scaling.md)';
end
$$;
comment on function ai._formation_delegated_clock() is
  'Internal, Citus only: ai.distribute() makes it a step of every delegated function, after the carry; on a worker, a delegated call (a Citus connection) by a role that may freeze the clock (a member of ai_test_clock) with no frozen clock there is refused with AS072, since a session-level ai.frozen_now of the coordinator never reaches it. True otherwise.';
revoke execute on function ai._formation_delegated_clock() from public;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS072', 'clock_not_carried', 'On a Citus formation, a call delegated to the worker that holds its thread was made by a role that may freeze the test clock (a member of ai_test_clock, where that role exists: test clusters only): the worker cannot see a clock frozen on the coordinator, so the call is refused rather than run on the wall clock. Call it in a transaction block (docs/scaling.md).');

create or replace function ai._formation_mac(a_secret text, a_payload text) returns text
language sql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
  -- sha256(key || sha256(key || message)): a keyed hash that a length extension cannot forge
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
           a_secret operator(pg_catalog.||) pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
             a_secret operator(pg_catalog.||) a_payload, 'UTF8')), 'hex'), 'UTF8')), 'hex')
$$;
comment on function ai._formation_mac(text, text) is
  'Internal, Citus only: the signature of a carried identity (ai._formation_caller).';

-- Internal: called inside the schema owner's functions only (ai.current_owner() does not call
-- them when a login calls it outside those).
revoke execute on function ai._formation_caller(name), ai._formation_carry(), ai._formation_mac(text, text), ai._formation_secret()
  from public;

-- The fence on the shard (deploy/thread_fences.sql; docs/scaling.md, "The fence on the shard").
-- On a formation every write made for a job checks the thread's fence where the thread lives,
-- not the job's row on the coordinator: ai.distribute() makes ai._fence, after its argument
-- checks, call this function instead of probing ai.agent_jobs (the one place the fence differs
-- between one server and a formation), and adds the trigger below to ai.agent_jobs, which writes
-- the fence in the claim's own transaction.
--   * the thread's fence row names this job, this token, and the job runs (held): the write goes
--     on. The row is read FOR SHARE: a claim that takes the job over (its trigger updates that
--     row) waits until this transaction ends, so a write that passed the check is ordered before
--     the takeover, as on one server the commit check orders it;
--   * the fence names this job, under another token or no longer running: AS006 "lease lost",
--     as one server says it (the job was taken over or finished);
--   * anything else: AS006 (the job is not the thread's running job under this token: it was
--     taken over, finished, or is another thread's job; one server tells the last apart, AS002,
--     which the shard cannot without the job's row).
-- The shard checks the token, not the lease expiry: the lease lives with the job on the
-- coordinator (renewals touch no shard). A holder whose lease ran out still writes until the job
-- is claimed again (that claim moves the fence); one server refuses it as soon as the lease ends.
-- (ai._fence keeps its check of the job's row for a call with thread_id NULL, request_human's for
-- the job's own thread, which runs on the coordinator with the job.) No SET search_path: an
-- internal helper inside the owner's pinned functions, as ai._fence; every name qualified.
create or replace function ai._fence_on_formation(thread_id text, job bigint, token bigint) returns void
language plpgsql volatile
as $$
declare
  v_thread pg_catalog.text := _fence_on_formation.thread_id;
  f record;
begin
  select t.job_id, t.fencing_token, t.held into f
  from ai.thread_fences t
  where t.thread_id operator(pg_catalog.=) v_thread
  for share;
  if found and f.held and f.job_id operator(pg_catalog.=) _fence_on_formation.job
     and f.fencing_token operator(pg_catalog.=) _fence_on_formation.token then
    return;
  end if;
  if found and f.job_id operator(pg_catalog.=) _fence_on_formation.job then
    raise exception using errcode = 'AS006',
      message = pg_catalog.format('job %s: lease lost', _fence_on_formation.job),
      detail = pg_catalog.format('the thread''s fence names job %s with fencing token %s (the caller holds %s), %s', f.job_id,
                                 f.fencing_token, _fence_on_formation.token,
                                 case when f.held then 'running' else 'no longer running' end);
  end if;
  raise exception using errcode = 'AS006',
    message = pg_catalog.format('job %s: not the running job of thread %s under fencing token %s',
                                _fence_on_formation.job, v_thread, _fence_on_formation.token),
    detail = case when found
                  then pg_catalog.format('the thread''s fence names job %s, token %s, %s', f.job_id, f.fencing_token,
                                         case when f.held then 'running' else 'no longer running' end)
                  else 'the thread has no fence: no job of it was claimed on this formation' end,
    hint = 'the lease was lost (or the job is another thread''s): the job''s new holder, if any, does the work';
end
$$;
comment on function ai._fence_on_formation(text, bigint, bigint) is
  'Internal, Citus only (ai.distribute() makes ai._fence call it after its argument checks): the fence of a write made for a job, checked on the thread''s shard against ai.thread_fences (the job, its token, still running), the row held FOR SHARE until the write commits; AS006 otherwise.';
revoke execute on function ai._fence_on_formation(text, bigint, bigint) from public;

-- The trigger ai.distribute() adds to ai.agent_jobs on a formation: a claim (a new token), a
-- takeover (the same), and a job leaving IN_PROGRESS write the thread's fence on its shard, in
-- the claim's (or the finish's) transaction: on a formation, one shard write per claim and per
-- finish, none per node step. A finish leaves the fence of a newer claim alone. The row comes
-- with the session's owner, read on the same shard in the same statement (a job whose session
-- is gone writes none: its writes find no fence and are refused).
create or replace function ai._thread_fence_moved() returns trigger
language plpgsql
as $$
declare
  v_now pg_catalog.timestamptz := ai.now();
begin
  -- the values as literals: Citus routes an INSERT ... SELECT to the thread's shard only when it
  -- holds no parameter (a generic plan of this statement would not plan: 0A000)
  execute pg_catalog.format($q$
    insert into ai.thread_fences as f (thread_id, owner, job_id, fencing_token, held, updated_at)
    select s.thread_id, s.owner, %s, %s, %L, %L
    from ai.agent_sessions s
    where s.thread_id operator(pg_catalog.=) %L
    on conflict (thread_id) do update
      set job_id = excluded.job_id, fencing_token = excluded.fencing_token, held = excluded.held,
          updated_at = excluded.updated_at
      where excluded.held or f.job_id operator(pg_catalog.=) excluded.job_id$q$,
    new.job_id, new.fencing_token, new.status operator(pg_catalog.=) 'IN_PROGRESS', v_now, new.thread_id);
  return null;
end
$$;
comment on function ai._thread_fence_moved() is
  'Internal trigger, Citus only (ai.distribute() adds it to ai.agent_jobs): a claim, a takeover or a job leaving IN_PROGRESS writes the thread''s fence (ai.thread_fences) on its shard, in the same transaction.';
revoke execute on function ai._thread_fence_moved() from public;  -- a trigger needs no grant

-- A formation step's dry run (ai._formation_rewrites, ai._formation_delegate: the one-server
-- check of tests/pgtap/distribute/): the step executed for real in a subtransaction that is then
-- rolled back, and what it said. Inside it, ai._formation_step_is_dry() is true: the step leaves
-- out Citus' own calls.
create or replace function ai._formation_dry_run(a_step text) returns pg_catalog.text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_done pg_catalog.text[];
  v_rolled_back constant pg_catalog.text := pg_catalog.format('ai.%s: the dry run, rolled back', a_step);
begin
  begin
    perform pg_catalog.set_config('ai.formation_rewrites_dry_run', 'on', true);  -- undone with the rest
    execute pg_catalog.format('select ai.%I(false)', a_step) into v_done;
    raise exception using message = v_rolled_back;
  exception when raise_exception then
    if sqlerrm operator(pg_catalog.<>) v_rolled_back then
      raise;
    end if;
  end;
  return v_done;
end
$$;
comment on function ai._formation_dry_run(text) is
  'Internal (ai._formation_rewrites, ai._formation_delegate): executes the named formation step for real, then rolls it back; returns what it said.';
revoke execute on function ai._formation_dry_run(text) from public;

create or replace function ai._formation_step_is_dry(a_step text) returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if pg_catalog.current_setting('ai.formation_rewrites_dry_run', true) is not distinct from 'on' then
    return true;
  end if;
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    raise exception using errcode = 'AS002',
      message = pg_catalog.format('ai.%s(false) acts on a Citus formation: on one server only its dry run (true)', a_step);
  end if;
  return false;
end
$$;
comment on function ai._formation_step_is_dry(text) is
  'Internal (ai._formation_rewrites, ai._formation_delegate): true inside a dry run (ai._formation_dry_run), false on a Citus formation; AS002 otherwise (one server: only the dry run).';
revoke execute on function ai._formation_step_is_dry(text) from public;

-- The per-thread writes delegated to the worker that holds the thread (ai._formation_delegate).
create or replace function ai._formation_delegated_writes() returns pg_catalog.text[]
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select array['ai.put_checkpoint(text,text,text,text,text,bytea,jsonb,jsonb,ai.checkpoint_values,ai.task_writes,jsonb,ai.step_commit)',
               'ai.put_writes(text,text,text,text,integer[],text[],text[],bytea[],text,bigint,bigint)',
               'ai.append_message_idempotent(text,text,jsonb,integer,text,integer,bigint,bigint)',
               'ai.begin_side_effect(text,text,jsonb,bigint,bigint,interval)',
               'ai.finish_side_effect(text,text,jsonb,bigint,bigint)',
               'ai.abandon_side_effect(text,text,bigint,bigint,text)']::pg_catalog.text[]
$$;
comment on function ai._formation_delegated_writes() is
  'Internal (ai.distribute()): the per-thread writes a Citus formation delegates to the worker that holds the thread, each a function of thread_id that returns one value.';
revoke execute on function ai._formation_delegated_writes() from public;

-- A delegated write's thread_id, checked where the planner folds constants: in the SQL wrapper
-- of a delegated write (ai._formation_delegate), a NULL or empty thread_id given as a value
-- raises AS002 while the caller's statement is planned, before Citus hashes it to choose the
-- worker (Citus 13.2.2 hashes a NULL distribution argument: the backend crashes). Immutable and
-- not strict, so that the planner calls it on a NULL.
create or replace function ai._formation_thread_id(thread_id text) returns text
language plpgsql immutable parallel safe
security definer  -- the caller's statement calls it: ai._check_thread_id is the owner's
set search_path = pg_catalog, pg_temp
as $$
begin
  perform ai._check_thread_id(thread_id);
  return thread_id;
end
$$;
comment on function ai._formation_thread_id(text) is
  'Internal, Citus only: returns thread_id, or raises AS002 as every function does for a NULL, empty or over-long one; immutable, so that the planner raises it for a value before Citus hashes the value (ai._formation_delegate). A Citus formation grants it to the roles that call the delegated writes.';
revoke execute on function ai._formation_thread_id(text) from public;

-- One node per step, and no tenant can crash the coordinator. Citus delegates a call of a
-- distributed function, alone in its statement, to the worker that holds its distribution
-- argument's shard, but hashes that argument first: a NULL there crashes the backend (Citus
-- 13.2.2, function_call_delegation.c), before the function's own AS002 guard could run. So no
-- function a tenant can name is delegated as deployed. Each delegated write ai.F(thread_id, ...)
-- (ai._formation_delegated_writes) becomes three:
--   ai.F                    an SQL function with F's signature, defaults and grants, which the
--                           planner inlines into the caller's statement:
--                           ai._delegated_F(ai._formation_thread_id(thread_id), row(...)), so a
--                           NULL thread_id raises AS002 while the statement is planned;
--   ai._delegated_F         the function Citus delegates (by thread_id, co-located with
--                           ai.agent_sessions): STRICT and not set-returning, so the planner folds
--                           a call with a NULL argument to NULL before Citus sees it (a tenant
--                           may call it: the inlined wrapper runs as the caller); its second
--                           argument, a row of F's other arguments (ai._delegated_F_args), is
--                           never NULL from the wrapper, whose NULL arguments are its fields;
--   ai._delegated_F_body    F's body as deployed and rewritten (ai._formation_rewrites), which
--                           the entry calls; the owner's only.
-- A set-returning function cannot be made safe so (the planner never folds one): append_messages
-- is not delegated, and begin_side_effect returns one row. Every other function with a
-- distribution argument loses it (a formation distributed by an older ai.distribute()). F is
-- rebuilt when a deploy replaced it (PL/pgSQL again); the rest is idempotent. dry_run: the same
-- statements but Citus' own calls, rolled back (the one-server check of tests/pgtap/distribute/).
create or replace function ai._formation_delegate(dry_run boolean) returns pg_catalog.text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_done pg_catalog.text[] := '{}'::pg_catalog.text[];
  v_objects constant pg_catalog.text := 'pg_dist_object';
  v_plpgsql constant pg_catalog.oid := (select l.oid from pg_catalog.pg_language l where l.lanname = 'plpgsql');
  v_dry boolean;
  r record;
  v_entry pg_catalog.text;
  v_type pg_catalog.text;
  v_body pg_catalog.text;
  v_fields pg_catalog.text;
  v_values pg_catalog.text;
  v_row pg_catalog.text;
  v_roles pg_catalog.text;
  v_def pg_catalog.text;
begin
  if dry_run then
    return ai._formation_dry_run('_formation_delegate');
  end if;
  v_dry := ai._formation_step_is_dry('_formation_delegate');  -- inside the dry run: Citus' own calls left out

  for r in select p.oid, p.oid::pg_catalog.regprocedure as fn, p.proname, p.proargnames, p.proargtypes::pg_catalog.oid[] as types,
                  p.prosrc, p.proretset, p.proargmodes, p.prorettype, p.proacl,
                  pg_catalog.pg_get_functiondef(p.oid) as def, pg_catalog.pg_get_function_arguments(p.oid) as args,
                  pg_catalog.oidvectortypes(p.proargtypes) as identity
             from pg_catalog.unnest(ai._formation_delegated_writes()) w(fn)
             join pg_catalog.pg_proc p on p.oid operator(pg_catalog.=) w.fn::pg_catalog.regprocedure
            where p.prolang operator(pg_catalog.=) v_plpgsql loop
    if r.proretset or r.proargmodes is not null or r.prorettype operator(pg_catalog.=) 'record'::pg_catalog.regtype
       or r.proargnames[1] is distinct from 'thread_id' or r.types[0] operator(pg_catalog.<>) 'text'::pg_catalog.regtype
       or pg_catalog.cardinality(r.types) operator(pg_catalog.<) 2 then
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): %s is not a function of thread_id and more arguments that returns one value of a named type: it cannot be delegated safely', r.fn);
    end if;
    v_entry := '_delegated_' operator(pg_catalog.||) r.proname;
    v_type := v_entry operator(pg_catalog.||) '_args';
    v_body := v_entry operator(pg_catalog.||) '_body';
    -- the other arguments, as the fields of the entry's row
    select pg_catalog.string_agg(pg_catalog.format('%I %s', a.name, pg_catalog.format_type(a.type, null)), ', ' order by a.ord),
           pg_catalog.string_agg(pg_catalog.format('a.%I', a.name), ', ' order by a.ord),
           pg_catalog.string_agg(pg_catalog.format('$%s', a.ord), ', ' order by a.ord)
      into v_fields, v_values, v_row
      from rows from (pg_catalog.unnest(r.proargnames), pg_catalog.unnest(r.types)) with ordinality a(name, type, ord)
     where a.ord operator(pg_catalog.>) 1;
    -- the roles that may call F may call its entry; the body is the owner's
    select pg_catalog.string_agg(pg_catalog.quote_ident(g.rolname), ', ')
      into v_roles
      from pg_catalog.aclexplode(r.proacl) x
      join pg_catalog.pg_roles g on g.oid operator(pg_catalog.=) x.grantee
     where x.privilege_type = 'EXECUTE' and x.grantee operator(pg_catalog.<>) x.grantor;

    -- what an earlier run made, for this signature or an older one
    execute pg_catalog.format('drop function if exists ai.%I(text, ai.%I)', v_entry, v_type);
    execute pg_catalog.format('drop type if exists ai.%I', v_type);
    execute pg_catalog.format('drop function if exists ai.%I(%s)', v_body, r.identity);

    execute pg_catalog.format('create type ai.%I as (%s)', v_type, v_fields);
    execute pg_catalog.format('comment on type ai.%I is %L', v_type,
      pg_catalog.format('Internal, Citus only: the arguments of %s after thread_id, one row (ai._formation_delegate).', r.fn));
    -- F's definition under the body's name, and its arguments named by the function's name
    -- (begin_side_effect.reservation) by the body's
    v_def := pg_catalog.regexp_replace(pg_catalog.replace(r.def, r.prosrc,
                                         pg_catalog.regexp_replace(r.prosrc, '\m' operator(pg_catalog.||) r.proname operator(pg_catalog.||) '\.',
                                                                   v_body operator(pg_catalog.||) '.', 'g')),
                                       '^CREATE OR REPLACE FUNCTION ai\.' operator(pg_catalog.||) r.proname operator(pg_catalog.||) '\(',
                                       'CREATE OR REPLACE FUNCTION ai.' operator(pg_catalog.||) v_body operator(pg_catalog.||) '(');
    if v_def operator(pg_catalog.=) r.def then
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): the definition of %s does not start as it knows', r.fn);
    end if;
    execute v_def;
    execute pg_catalog.format('revoke execute on function ai.%I(%s) from public', v_body, r.identity);
    execute pg_catalog.format('comment on function ai.%I(%s) is %L', v_body, r.identity,
      pg_catalog.format('Internal, Citus only: the body of %s as deployed, called by its delegated entry ai.%I (ai._formation_delegate).', r.fn, v_entry));
    execute pg_catalog.format($f$create function ai.%1$I(thread_id text, a ai.%2$I) returns %3$s
language plpgsql volatile strict security definer
set search_path = pg_catalog, pg_temp
as $e$
begin
  return ai.%4$I(thread_id, %5$s);
end
$e$
$f$, v_entry, v_type, pg_catalog.format_type(r.prorettype, null), v_body, v_values);
    execute pg_catalog.format('revoke execute on function ai.%I(text, ai.%I) from public', v_entry, v_type);
    execute pg_catalog.format('comment on function ai.%I(text, ai.%I) is %L', v_entry, v_type,
      pg_catalog.format('Internal, Citus only: %s as Citus delegates it to the worker that holds the thread; strict, so a NULL argument is folded to NULL before Citus hashes it; reached by the SQL wrapper %s inlined into the caller''s statement (ai._formation_delegate).', r.fn, r.fn));
    if v_roles is not null then
      execute pg_catalog.format('grant execute on function ai.%I(text, ai.%I), ai._formation_thread_id(text) to %s', v_entry, v_type, v_roles);
    end if;
    if not v_dry then
      perform 'PRAGMA:disable:check';  -- Citus' function: see ai._formation_secret
      -- F delegated by an older ai.distribute(): no distribution argument any more
      execute pg_catalog.format('select pg_catalog.create_distributed_function(%L)', r.fn);
      execute pg_catalog.format('select pg_catalog.create_distributed_function(%L)',
                                pg_catalog.format('ai.%I(%s)', v_body, r.identity));
      perform 'PRAGMA:enable:check';
    end if;
    -- F itself: the wrapper (same oid: its grants and comment stay)
    execute pg_catalog.format($f$create or replace function %1$s(%2$s) returns %3$s
language sql volatile
as $w$ select ai.%4$I(ai._formation_thread_id($1), row(%5$s)::ai.%6$I) $w$
$f$,
      pg_catalog.format('ai.%I', r.proname), r.args, pg_catalog.format_type(r.prorettype, null), v_entry, v_row, v_type);
    if not v_dry then
      perform 'PRAGMA:disable:check';  -- Citus' function: see ai._formation_secret
      execute pg_catalog.format($q$select pg_catalog.create_distributed_function(%L, 'thread_id', colocate_with => 'ai.agent_sessions')$q$,
                                pg_catalog.format('ai.%I(text, ai.%I)', v_entry, v_type));
      perform 'PRAGMA:enable:check';
    end if;
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: delegated to the worker that holds the thread (ai.%I)', r.fn, v_entry);
  end loop;

  -- every other function delegated (by an older ai.distribute(), append_messages): no more
  if not v_dry then
    perform 'PRAGMA:disable:check';  -- Citus' catalog and function: see ai._formation_secret
    for r in execute pg_catalog.format($q$
               select p.oid::pg_catalog.regprocedure as fn from pg_catalog.%I o
                 join pg_catalog.pg_proc p on p.oid operator(pg_catalog.=) o.objid
                where o.classid operator(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                  and o.distribution_argument_index is not null
                  and p.pronamespace in ('ai'::pg_catalog.regnamespace, 'ai_archive'::pg_catalog.regnamespace)
                  and not (p.proname like '\_delegated\_%%' and p.proisstrict and not p.proretset)$q$, v_objects) loop
      execute pg_catalog.format('select pg_catalog.create_distributed_function(%L)', r.fn);
      v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: not delegated', r.fn);
    end loop;
    perform 'PRAGMA:enable:check';
  end if;
  return v_done;
end
$$;
comment on function ai._formation_delegate(boolean) is
  'Internal (ai.distribute(), and the one-server check of tests/pgtap/distribute/): each per-thread write of ai._formation_delegated_writes() becomes an SQL wrapper of the same signature that the planner inlines, a strict entry that Citus delegates by thread_id (ai._delegated_<name>) and the deployed body (ai._delegated_<name>_body), so that no call a tenant can write makes Citus hash a NULL thread_id; returns what it did, one line each; AS002 when a write is not a function of thread_id returning one value. dry_run: executes it all but Citus'' calls, then rolls it back.';
revoke execute on function ai._formation_delegate(boolean) from public;

-- The rewrites of deployed function bodies that a formation needs (ai.distribute(), steps 6b, 6c,
-- 7 and 8 below), in one place, so that one server can check them: each rewrite finds the text
-- it expects in the body deployed (the same scripts deploy one server and a formation), and
-- raises AS002 when that text is missing, rather than leave the one-server shape on a formation
-- (where it fails, or is not what ai.distribute() promises). A body rewritten already (a second
-- run) is left alone.
--   * dry_run false: ai.distribute() on a formation; the new definitions are executed.
--   * dry_run true: the check of one server (tests/pgtap/distribute/): every rewrite executed the
--     same way (so each new body also compiles), Citus' own calls left out, then all of it rolled
--     back (a subtransaction ended by an error of its own); returns what it would have done, or
--     raises the AS002 of the first rewrite whose text is missing. A pattern that drifted from the
--     deployed body thus fails `make test` on one server, not first on a formation.
-- Not SECURITY DEFINER: the schema owner calls it (through ai.distribute(), or the check).
create or replace function ai._formation_rewrites(dry_run boolean) returns text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_done pg_catalog.text[] := '{}'::pg_catalog.text[];
  r record;
  v_head pg_catalog.text;
  v_rest pg_catalog.text;
  v_body pg_catalog.text;
  v_carrying pg_catalog.int4 := 0;
  v_dry boolean;
  -- append_message_idempotent's one statement (step 6c), as deploy/messages_functions.sql writes it
  v_append constant pg_catalog.text := $a$    insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at)
    select a_thread_id,
           coalesce((select max(x.seq) from ai.session_messages x where x.thread_id = a_thread_id), 0) + 1,
           s.owner, a_role, a_content, coalesce(a_tokens, ai.estimate_tokens(a_content)), a_turn, v_key, v_now
    from ai.agent_sessions s
    where s.thread_id = a_thread_id and s.status in ('active', 'waiting')
    on conflict do nothing
    returning * into m;$a$;
  -- ai._append_step_messages' INSERT of a step's messages, as deploy/checkpoints_functions.sql writes it
  v_step_messages constant pg_catalog.text := $a$      insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key,
                                       created_at)
      select $1, n.seq + e.ord, $2, e.m ->> 'role', e.m -> 'content', ai.estimate_tokens(e.m -> 'content'), null,
             e.m ->> 'idempotency_key', v_now
      from (select coalesce(max(x.seq), 0) as seq from ai.session_messages x where x.thread_id = $1) n
      cross join pg_catalog.jsonb_array_elements($4) with ordinality e(m, ord)
      order by e.ord;$a$;
  v_claim_lock constant pg_catalog.text := 'exists \(select from ai\.agent_sessions s where s\.thread_id = c\.thread_id\s+offset 0 for no key update skip locked\)';
  -- the refreshing memory reads' UPDATE (6e), as deploy/memory_functions.sql writes it
  v_memory_get constant pg_catalog.text := $a$    update ai.memory_items i set expires_at = v_now + i.ttl
    where i.owner = v_owner and i.ns = v_ns and i.key = a_key and i.ttl is not null and i.expires_at > v_now
    returning * into r;$a$;
  v_memory_search constant pg_catalog.text := $a$    update ai.memory_items i set expires_at = v_now + i.ttl
    from pg_catalog.unnest(v_rows) r
    where i.owner = v_owner and i.ns = ai._memory_ns(r.namespace) and i.key = r.key and i.ttl is not null;$a$;
  -- ai._insert_writes' INSERT of one task's pending writes and its count, as deploy/checkpoints_functions.sql writes them
  v_insert_writes constant pg_catalog.text := $a$  insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                    type, blob, task_path)
  select distinct on (u.idx)
         $1, $2, $3, $5, u.idx, $4, u.channel, u.type, u.blob, $6
  from unnest($7, $8, $9, $10) with ordinality as u(idx, channel, type, blob, ord)
  order by u.idx, case when u.idx < 0 then -u.ord else u.ord end
  on conflict on constraint checkpoint_writes_pkey do update
  set channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path
  where ai.checkpoint_writes.idx < 0;
  get diagnostics v_count = row_count;$a$;
  -- put_memory's INSERT of an item's embeddings, as deploy/memory_functions.sql writes it
  v_memory_vectors constant pg_catalog.text := $a$    insert into ai.memory_vectors (owner, ns, key, field, embedding)
    select v_owner, r.ns, a_key, e.field, e.embedding from ai._memory_embeddings(a_embeddings) e;$a$;
begin
  if dry_run then
    return ai._formation_dry_run('_formation_rewrites');
  end if;
  v_dry := ai._formation_step_is_dry('_formation_rewrites');  -- inside the dry run: Citus' own calls left out

  -- 6b. the claim's per-thread lock. On one server it is the thread's row of ai.agent_sessions,
  -- locked FOR NO KEY UPDATE SKIP LOCKED inside the pick query of ai.agent_jobs (the comment
  -- before ai._raise_lease_lost, deploy/queue_functions.sql). On a formation that row is on a
  -- shard and Citus cannot plan a query of a coordinator table that locks it (0A000). The one
  -- place the lock differs is here: in the claim functions (claim_job, claim_jobs) that subquery
  -- becomes a transaction-level advisory lock of the coordinator, tried and never waited for, the
  -- same semantics (held until the claim commits, a held one skips the thread). Its key is the
  -- thread id hashed with the queue's secret (ai.notify_key, read by the schema owner only, once
  -- per statement): no tenant can compute the key of another tenant's thread to hold its jobs
  -- off, which is why one server locks the session row rather than a plain advisory key. Class
  -- 1095980099 ('ASTC': agent-state thread claim). A claim of n jobs holds up to n of these
  -- locks (the lock table: max_locks_per_transaction; docs/scaling.md). A later deploy of
  -- queue_functions puts the session row lock back: the claim then fails with 0A000 until
  -- ai.distribute() runs again, as the identity's carry does (step 7).
  for r in select p.oid::pg_catalog.regprocedure as fn, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def
             from pg_catalog.pg_proc p
            where p.pronamespace operator(pg_catalog.=) 'ai'::pg_catalog.regnamespace
              and p.proname in ('claim_job', 'claim_jobs')
              and pg_catalog.regexp_replace(p.prosrc, '--[^\n]*', '', 'g') ~ 'ai\.agent_sessions' loop
    v_body := pg_catalog.regexp_replace(r.prosrc, v_claim_lock,
      'pg_catalog.pg_try_advisory_xact_lock(1095980099, pg_catalog.hashtext((select k.key from ai.notify_key k) operator(pg_catalog.||) c.thread_id))', 'g');
    -- every read of the session row replaced (comments aside): one of another shape would stay,
    -- and Citus cannot plan it from the coordinator's table
    if pg_catalog.regexp_replace(v_body, '--[^\n]*', '', 'g') ~ 'ai\.agent_sessions' then
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): %s locks the thread''s session in a shape it does not know', r.fn);
    end if;
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: the per-thread lock of the coordinator', r.fn);
  end loop;

  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai._fence(text, bigint, bigint)'::pg_catalog.regprocedure
              and p.prosrc !~ 'ai\._fence_on_formation\(' loop
    -- its argument checks stay; before its probe of the job's row, a write to a named thread
    -- checks the thread's fence instead (a call for the job's own thread, thread_id NULL, runs on
    -- the coordinator with the job: it keeps the probe)
    v_body := pg_catalog.regexp_replace(r.prosrc, '(\n  -- The held job and its thread in one probe)',
      E'\n  if _fence.thread_id is not null then\n    -- on a Citus formation: the thread''s fence on its shard (ai.distribute())\n    perform ai._fence_on_formation(_fence.thread_id, _fence.job_id, _fence.fencing_token);\n    return;\n  end if;\\1');
    if v_body operator(pg_catalog.=) r.prosrc then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai._fence has no probe of the job''s row to put the thread''s fence before';
    end if;
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai._fence: the thread''s fence on its shard'::pg_catalog.text;
  end loop;

  -- The side-effect ledger asks whether a reservation's holder is alive: with a job, the job's
  -- row on the coordinator, which begin_side_effect delegated to the thread's worker (6d) cannot
  -- read. On a formation it asks the thread's fence there instead (the job, its token, still
  -- running: the token, not the lease expiry, as ai._fence_on_formation), in PL/pgSQL (Citus
  -- plans no query with parameters in an SQL function). Citus made the function on the
  -- coordinator only (its argument is a row of ai.side_effects): it is propagated to the workers.
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai._side_effect_holder_alive(ai.side_effects, timestamptz)'::pg_catalog.regprocedure
              and p.prosrc !~ 'ai\.thread_fences' loop
    if r.prosrc !~ 'when e\.job_id is null then e\.reserved_until > now\s+else exists \(select from ai\.agent_jobs j' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai._side_effect_holder_alive reads ai.agent_jobs in a shape it does not know';
    end if;
    execute pg_catalog.replace(pg_catalog.replace(r.def, r.prosrc, $b$
begin
  -- on a Citus formation: the job's fence on the thread's worker (ai.distribute())
  if e.status operator(pg_catalog.<>) 'reserved' then
    return false;
  end if;
  if e.job_id is null then
    return e.reserved_until operator(pg_catalog.>) now;
  end if;
  perform from ai.thread_fences f
  where f.thread_id operator(pg_catalog.=) e.thread_id and f.job_id operator(pg_catalog.=) e.job_id
    and f.fencing_token operator(pg_catalog.=) e.fencing_token and f.held;
  return found;
end
$b$), ' LANGUAGE sql', ' LANGUAGE plpgsql');
    if not v_dry then
      perform 'PRAGMA:disable:check';  -- a function of Citus: see ai._formation_secret
      execute pg_catalog.format('select pg_catalog.create_distributed_function(%L)', r.oid::pg_catalog.regprocedure);
      perform 'PRAGMA:enable:check';
    end if;
    v_done := v_done operator(pg_catalog.||) 'ai._side_effect_holder_alive: the job''s fence on the thread''s worker'::pg_catalog.text;
  end loop;

  -- An append's one statement (append_message_idempotent: INSERT ... SELECT of the session's owner
  -- ... RETURNING INTO) fails on a worker from its second run in a session, and nested under a
  -- delegated put_checkpoint (its step's messages when one is a retry): XX000 "consistency check
  -- on SPI tuple count failed" (Citus 13.2.2, its local execution of the cached plan); the demo's
  -- resumed worker failed every attempt on it. On a formation it becomes three: the session's
  -- owner (active or waiting), the next seq, and an INSERT ... VALUES, under the same loop (a seq
  -- taken meanwhile inserts nothing and the loop turns). One server keeps its one statement.
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint)'::pg_catalog.regprocedure
              and p.prolang operator(pg_catalog.=) (select l.oid from pg_catalog.pg_language l where l.lanname = 'plpgsql')  -- not ai._formation_delegate's wrapper
              and pg_catalog.strpos(p.prosrc, 'v_fo_owner') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_append) operator(pg_catalog.=) 0 or r.prosrc !~* '^\s*(#[^\n]*\n\s*)*declare\M' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai.append_message_idempotent writes its message in a shape it does not know';
    end if;
    v_body := pg_catalog.regexp_replace(pg_catalog.replace(r.prosrc, v_append, $b$    -- on a Citus formation (ai.distribute()): the session, the next seq, then INSERT ... VALUES
    select s.owner into v_fo_owner from ai.agent_sessions s where s.thread_id = a_thread_id and s.status in ('active', 'waiting');
    m := null;
    if v_fo_owner is not null then
      select coalesce(max(x.seq), 0) + 1 into v_fo_seq from ai.session_messages x where x.thread_id = a_thread_id;
      insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at)
      values (a_thread_id, v_fo_seq, v_fo_owner, a_role, a_content, coalesce(a_tokens, ai.estimate_tokens(a_content)), a_turn, v_key, v_now)
      on conflict do nothing
      returning * into m;
    end if;$b$), '^(\s*(#[^\n]*\n\s*)*)declare', '\1declare v_fo_owner text; v_fo_seq bigint;', 'i');
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai.append_message_idempotent: the session, the seq and the message in three statements'::pg_catalog.text;
  end loop;

  -- A step's messages (ai._append_step_messages, put_checkpoint's fast path: one INSERT ... SELECT
  -- of every message) inside a transaction block, where Citus does not delegate put_checkpoint,
  -- go through the coordinator, where that INSERT ... SELECT is a COPY into the thread's shard,
  -- which row level security refuses (0A000 "COPY FROM not supported with row-level security").
  -- On a formation it becomes the thread's newest seq, then one INSERT ... VALUES per message (a
  -- router insert through the coordinator, a local one on the worker); the same rows, in the
  -- same subtransaction. One server keeps its one statement.
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai._append_step_messages(text, text, text, jsonb)'::pg_catalog.regprocedure
              and pg_catalog.strpos(p.prosrc, 'v_fo_seq') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_step_messages) operator(pg_catalog.=) 0 or r.prosrc !~* '^\s*declare\M' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai._append_step_messages writes the messages in a shape it does not know';
    end if;
    v_body := pg_catalog.regexp_replace(pg_catalog.replace(r.prosrc, v_step_messages, $b$      -- on a Citus formation (ai.distribute()): the newest seq, then one INSERT ... VALUES per message
      select coalesce(max(x.seq), 0) into v_fo_seq from ai.session_messages x where x.thread_id = $1;
      for v_fo_m, v_fo_ord in select e.m, e.ord from pg_catalog.jsonb_array_elements($4) with ordinality e(m, ord) order by e.ord loop
        insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key,
                                         created_at)
        values ($1, v_fo_seq + v_fo_ord, $2, v_fo_m ->> 'role', v_fo_m -> 'content', ai.estimate_tokens(v_fo_m -> 'content'), null,
                v_fo_m ->> 'idempotency_key', v_now);
      end loop;$b$), '^(\s*)declare', '\1declare v_fo_seq bigint; v_fo_m jsonb; v_fo_ord bigint;', 'i');
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai._append_step_messages: one INSERT ... VALUES per message'::pg_catalog.text;
  end loop;

  -- 6e. the memory store's refreshing reads (get_memory, search_memory with refresh_ttl): one
  -- UPDATE that sets expires_at = now + the row's ttl. Citus refuses a STABLE operator such as
  -- timestamptz + interval applied to a column in an UPDATE of a distributed table (0A000, "STABLE
  -- functions used in UPDATE queries cannot be called with column references"; a subquery of the
  -- UPDATE computing them is refused the same way). On a formation the rows are locked and their
  -- new expiries computed by a SELECT first, then written as values. One server keeps its one
  -- statement (about 0.3 ms less per refreshing search of 10 rows: docs/scaling.md).
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai.get_memory(text[], text, boolean)'::pg_catalog.regprocedure
              and pg_catalog.strpos(p.prosrc, 'v_fo_ttl') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_memory_get) operator(pg_catalog.=) 0 or r.prosrc !~* '^\s*(#[^\n]*\n\s*)*declare\M' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai.get_memory refreshes the ttl in a shape it does not know';
    end if;
    v_body := pg_catalog.regexp_replace(pg_catalog.replace(r.prosrc, v_memory_get, $b$    -- on a Citus formation (ai.distribute()): the ttl read and the row locked, then the new expiry as a value
    select i.ttl into v_fo_ttl from ai.memory_items i
    where i.owner = v_owner and i.ns = v_ns and i.key = a_key and i.ttl is not null and i.expires_at > v_now
    for update;
    if found then
      update ai.memory_items i set expires_at = v_now + v_fo_ttl
      where i.owner = v_owner and i.ns = v_ns and i.key = a_key
      returning * into r;
    end if;$b$), '^(\s*(#[^\n]*\n\s*)*)declare', '\1declare v_fo_ttl interval;', 'i');
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai.get_memory: the ttl read, then the new expiry written'::pg_catalog.text;
  end loop;
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text)'::pg_catalog.regprocedure
              and pg_catalog.strpos(p.prosrc, 'v_fo_expiries') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_memory_search) operator(pg_catalog.=) 0 or r.prosrc !~* '^\s*(#[^\n]*\n\s*)*declare\M' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai.search_memory refreshes the ttl in a shape it does not know';
    end if;
    v_body := pg_catalog.regexp_replace(pg_catalog.replace(r.prosrc, v_memory_search, $b$    -- on a Citus formation (ai.distribute()): the new expiries computed and the rows locked, then written as values
    select pg_catalog.array_agg(i.ns), pg_catalog.array_agg(i.key), pg_catalog.array_agg(v_now + i.ttl)
      into v_fo_nss, v_fo_keys, v_fo_expiries
    from (select i.ns, i.key, i.ttl from ai.memory_items i
          join pg_catalog.unnest(v_rows) r on i.ns = ai._memory_ns(r.namespace) and i.key = r.key
          where i.owner = v_owner and i.ttl is not null
          for update of i) i;
    update ai.memory_items i set expires_at = u.expires_at
    from rows from (pg_catalog.unnest(v_fo_nss), pg_catalog.unnest(v_fo_keys), pg_catalog.unnest(v_fo_expiries)) u(ns, key, expires_at)
    where i.owner = v_owner and i.ns = u.ns and i.key = u.key;$b$),
      '^(\s*(#[^\n]*\n\s*)*)declare', '\1declare v_fo_nss text[]; v_fo_keys text[]; v_fo_expiries timestamptz[];', 'i');
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai.search_memory: the new expiries computed, then written'::pg_catalog.text;
  end loop;

  -- 6f. the read of one thread's checkpoints (ai._checkpoint_reads, for get_checkpoint and
  -- list_checkpoints) is an SQL function that one server inlines into their queries; Citus refuses
  -- an inlined SQL function over distributed tables ("parameterized queries for SQL functions
  -- referencing distributed tables are not supported"). On a formation it becomes PL/pgSQL, its
  -- one query planned for each call's values, so Citus routes it to the thread's shard.
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai._checkpoint_reads(text, text, text, text, jsonb, integer)'::pg_catalog.regprocedure
              and p.prolang operator(pg_catalog.=) (select l.oid from pg_catalog.pg_language l where l.lanname = 'sql') loop
    v_body := pg_catalog.rtrim(r.prosrc, E' \n\t;');
    if v_body !~* '^\s*select\M' or pg_catalog.strpos(v_body, ';') operator(pg_catalog.<>) 0
       or pg_catalog.strpos(r.def, E'\n LANGUAGE sql\n') operator(pg_catalog.=) 0 then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai._checkpoint_reads is not the one SELECT of an SQL function it knows';
    end if;
    execute pg_catalog.replace(pg_catalog.replace(r.def, r.prosrc,
                                                  E'\nbegin\n  -- on a Citus formation (ai.distribute()): PL/pgSQL, planned per call\n  return query'
                                                  operator(pg_catalog.||) v_body operator(pg_catalog.||) E';\nend\n'),
                               E'\n LANGUAGE sql\n', E'\n LANGUAGE plpgsql\n SET plan_cache_mode TO ''force_custom_plan''\n');
    v_done := v_done operator(pg_catalog.||) 'ai._checkpoint_reads: PL/pgSQL, planned per call'::pg_catalog.text;
  end loop;

  -- One task's pending writes (ai._insert_writes: put_writes, put_checkpoint's held writes) are
  -- one INSERT ... SELECT ... ON CONFLICT whose ROW_COUNT is the rows written. Through the
  -- coordinator (a call in a transaction block, not delegated) Citus runs that INSERT ... SELECT
  -- from an intermediate result and reports the rows offered: put_writes returned 2 for a repeat
  -- of the same (task, idx) that wrote nothing, where one server returns 0
  -- (tests/pgtap/put_writes/are_idempotent_per_task_and_idx.sql). On a formation the count is
  -- that of the rows the INSERT returns (a CTE ... RETURNING, which Citus plans the same way and
  -- counts right). One server keeps its ROW_COUNT: the CTE cost it 4 to 10% of a put_writes in a
  -- paired A/B (scripts/put_writes_count_ab.py).
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai._insert_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[])'::pg_catalog.regprocedure
              and pg_catalog.strpos(p.prosrc, 'returning 1') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_insert_writes) operator(pg_catalog.=) 0 then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai._insert_writes writes and counts the pending writes in a shape it does not know';
    end if;
    v_body := pg_catalog.replace(r.prosrc, v_insert_writes, $b$  -- on a Citus formation (ai.distribute()): the rows the INSERT returns, not its ROW_COUNT
  with w as (
$b$ operator(pg_catalog.||) pg_catalog.replace(pg_catalog.left(v_insert_writes, pg_catalog.strpos(v_insert_writes, ';') operator(pg_catalog.-) 1), E'\n', E'\n  ')
      operator(pg_catalog.||) $b$
    returning 1)
  select pg_catalog.count(*)::pg_catalog.int4 into v_count from w;$b$);
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai._insert_writes: counts the rows its INSERT returns'::pg_catalog.text;
  end loop;

  -- An item's embeddings (put_memory: one INSERT ... SELECT of every field from
  -- ai._memory_embeddings) go through the coordinator (put_memory is not delegated), where that
  -- INSERT ... SELECT is a COPY into the owner's shard, which row level security refuses (0A000
  -- "COPY FROM not supported with row-level security"): every put_memory with embeddings failed on
  -- a formation. On a formation it becomes one INSERT ... VALUES per field (a router insert); the
  -- same rows. One server keeps its one statement.
  for r in select p.oid, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) 'ai.put_memory(text[], text, jsonb, interval, text[], jsonb)'::pg_catalog.regprocedure
              and pg_catalog.strpos(p.prosrc, 'v_fo_field') operator(pg_catalog.=) 0 loop
    if pg_catalog.strpos(r.prosrc, v_memory_vectors) operator(pg_catalog.=) 0 or r.prosrc !~* '^\s*(#[^\n]*\n\s*)*declare\M' then
      raise exception using errcode = 'AS002',
        message = 'ai.distribute(): ai.put_memory writes an item''s embeddings in a shape it does not know';
    end if;
    v_body := pg_catalog.regexp_replace(pg_catalog.replace(r.prosrc, v_memory_vectors, $b$    -- on a Citus formation (ai.distribute()): one INSERT ... VALUES per field
    for v_fo_field, v_fo_embedding in select e.field, e.embedding from ai._memory_embeddings(a_embeddings) e loop
      insert into ai.memory_vectors (owner, ns, key, field, embedding)
      values (v_owner, r.ns, a_key, v_fo_field, v_fo_embedding);
    end loop;$b$), '^(\s*(#[^\n]*\n\s*)*)declare', '\1declare v_fo_field text; v_fo_embedding real[];', 'i');
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) 'ai.put_memory: one INSERT ... VALUES per embedding'::pg_catalog.text;
  end loop;

  -- 7. every SECURITY DEFINER function of ai (but the identity's own and the triggers', which run
  -- on the shards) carries the caller's identity first: a variable of its DECLARE section is
  -- initialised by ai._formation_carry(). A later deploy replaces the functions without it: they
  -- then refuse on the shards (AS070) until ai.distribute() runs again.
  for r in select p.oid::pg_catalog.regprocedure as fn, p.prosrc,
                  pg_catalog.pg_get_functiondef(p.oid) as def
             from pg_catalog.pg_proc p
            where p.pronamespace operator(pg_catalog.=) 'ai'::pg_catalog.regnamespace
              and p.prosecdef
              and p.prolang operator(pg_catalog.=) (select l.oid from pg_catalog.pg_language l where l.lanname = 'plpgsql')
              and p.prorettype operator(pg_catalog.<>) 'trigger'::pg_catalog.regtype
              and p.proname not like '\_formation\_%'
              -- the entries of the delegated writes call a body that carries (ai._formation_delegate)
              and (p.proname not like '\_delegated\_%' or p.proname like '%\_body')
              and p.proname not in ('distribute', 'current_owner', 'sees_all_owners', 'calling_role', 'act_as')
              and p.prosrc !~ 'ai\._formation_carry\(\)' loop
    -- the body's first word after comments and #directives: DECLARE (add the variable after it)
    -- or BEGIN (add a DECLARE section before it)
    v_head := pg_catalog.substring(r.prosrc, '^(\s*(?:--[^\n]*\n\s*|#[^\n]*\n\s*)*)');
    v_rest := pg_catalog.substr(r.prosrc, pg_catalog.length(v_head) operator(pg_catalog.+) 1);
    if v_rest ~* '^declare\M' then
      v_body := v_head operator(pg_catalog.||) 'declare _formation_carried boolean := ai._formation_carry();'
                operator(pg_catalog.||) pg_catalog.substr(v_rest, 8);
    elsif v_rest ~* '^begin\M' then
      v_body := v_head operator(pg_catalog.||) 'declare _formation_carried boolean := ai._formation_carry(); '
                operator(pg_catalog.||) v_rest;
    else
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): the body of %s starts with neither DECLARE nor BEGIN', r.fn);
    end if;
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_carrying := v_carrying operator(pg_catalog.+) 1;
  end loop;
  if v_carrying operator(pg_catalog.>) 0 then
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s functions carry the caller''s identity', v_carrying);
  end if;

  -- 7b. the test clock under delegation: every per-thread write that ai.distribute() delegates
  -- (ai._formation_delegated_writes, ai._formation_delegate) then refuses, on a worker, a call by
  -- a role that may freeze the clock (ai._formation_delegated_clock above): a second variable
  -- after the carry of step 7. Its body as deployed (PL/pgSQL: the SQL wrapper that
  -- ai._formation_delegate leaves in its place calls a copy of it). A later deploy replaces the
  -- functions without it (the next ai.distribute() puts both back).
  for r in select p.oid::pg_catalog.regprocedure as fn, p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as def
             from pg_catalog.unnest(ai._formation_delegated_writes()) w(fn)
             join pg_catalog.pg_proc p on p.oid operator(pg_catalog.=) w.fn::pg_catalog.regprocedure
            where p.prolang operator(pg_catalog.=) (select l.oid from pg_catalog.pg_language l where l.lanname = 'plpgsql')
              and pg_catalog.strpos(p.prosrc, 'ai._formation_delegated_clock()') operator(pg_catalog.=) 0 loop
    v_body := pg_catalog.replace(r.prosrc, '_formation_carried boolean := ai._formation_carry();',
      '_formation_carried boolean := ai._formation_carry(); _formation_clock boolean := ai._formation_delegated_clock();');
    if v_body operator(pg_catalog.=) r.prosrc then
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): %s does not carry the caller''s identity (step 7) to refuse the test clock after', r.fn);
    end if;
    execute pg_catalog.replace(r.def, r.prosrc, v_body);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: a role that may freeze the clock is refused under delegation', r.fn);
  end loop;

  -- 8. reads of a thread's distributed rows planned for each call's arguments: Citus routes a
  -- query with parameters to the one shard of its thread only when the plan is made for the
  -- values (a generic plan of such a query fails: "could not create distributed plan"). One server
  -- keeps the generic plans these functions were written with.
  for r in select p.oid::pg_catalog.regprocedure as fn, p.proconfig from pg_catalog.pg_proc p
            where p.oid operator(pg_catalog.=) any (array['ai.get_checkpoint(text,text,text)'::pg_catalog.regprocedure,
                                                      'ai.list_checkpoints(text,text,text,integer,jsonb,text,text)'::pg_catalog.regprocedure])
              and not 'plan_cache_mode=force_custom_plan' operator(pg_catalog.=) any (coalesce(p.proconfig, '{}')) loop
    if not 'plan_cache_mode=force_generic_plan' operator(pg_catalog.=) any (coalesce(r.proconfig, '{}')) then
      raise exception using errcode = 'AS002',
        message = pg_catalog.format('ai.distribute(): %s is planned in a way it does not know (no plan_cache_mode = force_generic_plan)', r.fn);
    end if;
    execute pg_catalog.format('alter function %s set plan_cache_mode = force_custom_plan', r.fn);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: planned per call', r.fn);
  end loop;

  return v_done;
end
$$;
comment on function ai._formation_rewrites(boolean) is
  'Internal (ai.distribute(), and the one-server check of tests/pgtap/distribute/): the rewrites of deployed function bodies a Citus formation needs (the claim''s lock, ai._fence, the ledger''s holder check, the append, a step''s messages, the count of a task''s pending writes, an item''s embeddings, the memory store''s ttl refresh, the carried identity, the test clock under delegation, plans per call); returns what it did, one line each; AS002 when a body lacks the text a rewrite expects. dry_run: executes them all, then rolls them back.';
revoke execute on function ai._formation_rewrites(boolean) from public;

create or replace function ai.distribute() returns text
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_owner pg_catalog.name := (select n.nspowner::pg_catalog.regrole::pg_catalog.name from pg_catalog.pg_namespace n where n.nspname = 'ai');
  v_done pg_catalog.text[] := '{}'::pg_catalog.text[];
  r record;
  v_qual pg_catalog.text;
  v_check pg_catalog.text;
  v_rx constant pg_catalog.text := '\(\s*SELECT (ai\.(current_owner|sees_all_owners)\(\)) AS \w+\)';
  v_queue constant pg_catalog.text[] := '{ai.agent_jobs,ai.agent_jobs_archive,ai.job_fences,ai.notify_key,ai.queue_workers,ai.lease_timelines,ai_archive.agent_jobs,ai_archive.agent_jobs_archive}'::pg_catalog.text[];
  v_reference constant pg_catalog.text[] := '{ai.error_codes,ai._archived_tables,ai.formation_secret}'::pg_catalog.text[];
  v_anchor constant pg_catalog.text := 'ai.agent_sessions';
  v_memory_anchor constant pg_catalog.text := 'ai.memory_items';
  v_progress boolean;
  v_forced pg_catalog.regclass[] := '{}'::pg_catalog.regclass[];
  v_distributed pg_catalog.regclass[];
  v_partitions pg_catalog.text := 'pg_dist_partition';
  v_objects pg_catalog.text := 'pg_dist_object';
  v_propagate pg_catalog.text;
  v_functions pg_catalog.int4 := 0;
  v_rel pg_catalog.regclass;
  v_copied boolean := false;  -- rows copied to the shards by this call (step 5)
  v_rows boolean;
  v_nodes pg_catalog.text := 'pg_dist_node';
  v_coordinator boolean;
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    return 'citus is not installed in this database: nothing to distribute (one server keeps the schema as deployed)';
  end if;
  if session_user operator(pg_catalog.<>) v_owner then
    raise exception using errcode = 'AS007',
      message = pg_catalog.format('ai.distribute() runs as the schema owner %I (it is connected as %I)', v_owner, session_user);
  end if;
  -- the tables Citus knows already (dynamic SQL: its catalog exists where citus is installed)
  perform 'PRAGMA:disable:check';  -- Citus' catalog: see ai._formation_secret
  execute pg_catalog.format($q$select coalesce(pg_catalog.array_agg(d.logicalrelid), '{}') from pg_catalog.%I d$q$, v_partitions)
     into v_distributed;
  -- the coordinator in the metadata (citus_set_coordinator_host): the two-phase table (step 4b)
  -- is a Citus local table, whose one shard is on the coordinator, and the formation's secret is
  -- read from this node's copy of a reference table (ai._formation_secret). Without it the
  -- transactions that write the queue and a worker would commit in one phase: refused, nothing done
  execute pg_catalog.format('select exists (select from pg_catalog.%I n where n.groupid operator(pg_catalog.=) 0)', v_nodes)
     into v_coordinator;
  perform 'PRAGMA:enable:check';
  if not v_coordinator then
    raise exception using errcode = 'AS071',
      message = 'ai.distribute(): the coordinator is not in this formation''s metadata',
      detail = 'the queue stays on the coordinator, and a transaction that writes it and a worker commits in two phases only through a Citus local table there',
      hint = 'as a superuser on the coordinator: select citus_set_coordinator_host(''<its host>'', <its port>); then ai.distribute() again (docs/scaling.md)';
  end if;
  -- the schema's triggers run on the shards (each reads and writes its own thread's rows only)
  perform pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true);
  -- the DDL of this function goes to every node in the one transaction it runs in
  perform pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true);

  -- 0. every function of ai and ai_archive on every node: a database deployed before the citus
  -- extension was created in it (one server moved onto a formation, docs/scaling.md) has none of
  -- them on the workers, where the shards' checks, defaults, policies and triggers call them. Those
  -- that take or return a table's row type stay on the coordinator, as Citus leaves them when the
  -- schema is deployed after the extension. Once marked distributed, later deploys propagate them.
  -- Without checking their bodies on the workers (a body may name a table not distributed yet):
  -- a SET LOCAL, which Citus sends on to the workers (ai._formation_caller says why a DO block);
  -- the propagation set back after it
  v_propagate := pg_catalog.current_setting('citus.propagate_set_commands');
  perform pg_catalog.set_config('citus.propagate_set_commands', 'local', true);
  execute 'do $d$ begin set local check_function_bodies = off; end $d$';
  perform 'PRAGMA:disable:check';  -- Citus' catalog: see ai._formation_secret
  for r in execute pg_catalog.format($q$
             select p.oid::pg_catalog.regprocedure as fn from pg_catalog.pg_proc p
              where p.pronamespace in ('ai'::pg_catalog.regnamespace, 'ai_archive'::pg_catalog.regnamespace)
                and not exists (select from pg_catalog.%I d
                                 where d.classid operator(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                                   and d.objid operator(pg_catalog.=) p.oid)
                and not exists (select from pg_catalog.pg_type t
                                 join pg_catalog.pg_class c on c.oid operator(pg_catalog.=) t.typrelid
                                 where c.relkind in ('r', 'p')
                                   and t.oid operator(pg_catalog.=) any (p.prorettype operator(pg_catalog.||) coalesce(p.proallargtypes, p.proargtypes::pg_catalog.oid[])))
              order by p.oid$q$, v_objects) loop
    execute pg_catalog.format('select pg_catalog.create_distributed_function(%L)', r.fn);
    v_functions := v_functions operator(pg_catalog.+) 1;
  end loop;
  if v_functions operator(pg_catalog.>) 0 then
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s functions made on every node', v_functions);
  end if;
  perform 'PRAGMA:enable:check';
  execute 'do $d$ begin set local check_function_bodies = on; end $d$';
  perform pg_catalog.set_config('citus.propagate_set_commands', v_propagate, true);

  -- 1. policies without subqueries
  for r in select p.schemaname, p.tablename, p.policyname, p.qual, p.with_check
             from pg_catalog.pg_policies p
            where p.schemaname in ('ai', 'ai_archive')
              and (p.qual ~ v_rx or p.with_check ~ v_rx) loop
    v_qual := pg_catalog.regexp_replace(r.qual, v_rx, '\1', 'g');
    v_check := pg_catalog.regexp_replace(r.with_check, v_rx, '\1', 'g');
    execute pg_catalog.format('alter policy %I on %I.%I using (%s) with check (%s)',
      r.policyname, r.schemaname, r.tablename, v_qual, coalesce(v_check, v_qual));
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('policy %I.%I.%I without subquery', r.schemaname, r.tablename, r.policyname);
  end loop;

  -- 2. human_approvals' primary key holds the distribution column
  for r in select c.conrelid::pg_catalog.regclass as rel, c.conname
             from pg_catalog.pg_constraint c
            where c.contype = 'p'
              and c.conrelid in ('ai.human_approvals'::pg_catalog.regclass, 'ai_archive.human_approvals'::pg_catalog.regclass)
              and pg_catalog.pg_get_constraintdef(c.oid) operator(pg_catalog.=) 'PRIMARY KEY (approval_id)' loop
    execute pg_catalog.format('alter table %s drop constraint %I, add primary key (thread_id, approval_id)', r.rel, r.conname);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: primary key (thread_id, approval_id)', r.rel);
  end loop;

  -- 3. the queue's foreign keys to the sessions
  for r in select c.conrelid::pg_catalog.regclass as rel, c.conname
             from pg_catalog.pg_constraint c
            where c.contype = 'f'
              and c.conrelid::pg_catalog.regclass::pg_catalog.text operator(pg_catalog.=) any (v_queue)
              and c.confrelid in ('ai.agent_sessions'::pg_catalog.regclass, 'ai_archive.agent_sessions'::pg_catalog.regclass) loop
    execute pg_catalog.format('alter table %s drop constraint %I', r.rel, r.conname);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: foreign key %I dropped', r.rel, r.conname);
  end loop;

  -- 4. reference tables, the formation's secret first (ai._formation_caller)
  if not exists (select from ai.formation_secret) then
    insert into ai.formation_secret (secret)
    values (pg_catalog.md5(pg_catalog.gen_random_uuid()::text) operator(pg_catalog.||) pg_catalog.md5(pg_catalog.gen_random_uuid()::text));
    v_done := v_done operator(pg_catalog.||) 'ai.formation_secret: made'::pg_catalog.text;
  end if;
  for r in select t.name::pg_catalog.regclass as rel from pg_catalog.unnest(v_reference) t(name)
            where t.name::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed) loop
    execute pg_catalog.format('alter table %s no force row level security', r.rel);
    execute pg_catalog.format('select pg_catalog.create_reference_table(%L)', r.rel);
    execute pg_catalog.format('alter table %s force row level security', r.rel);
    v_distributed := v_distributed operator(pg_catalog.||) r.rel;
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: reference table', r.rel);
  end loop;

  -- 4b. two-phase commit between the queue and a worker (ai._formation_two_phase above): the
  -- two-phase table a Citus local table, its one shard on the coordinator, always empty,
  if 'ai.formation_two_phase'::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed) then
    perform 'PRAGMA:disable:check';  -- a function of Citus: see ai._formation_secret
    execute pg_catalog.format('select pg_catalog.%I(%L)', 'citus_add_local_table_to_metadata', 'ai.formation_two_phase');
    perform 'PRAGMA:enable:check';
    v_distributed := v_distributed operator(pg_catalog.||) 'ai.formation_two_phase'::pg_catalog.regclass;
    v_done := v_done operator(pg_catalog.||) 'ai.formation_two_phase: a Citus local table on the coordinator'::pg_catalog.text;
  end if;
  -- and every table of the queue (plain tables of the coordinator, step 6) gets the trigger that
  -- marks its writer's transaction. One server has none: its transactions are atomic on one node.
  for r in select pg_catalog.to_regclass(t.name) as rel from pg_catalog.unnest(v_queue) t(name)
            where pg_catalog.to_regclass(t.name) is not null
              and not exists (select from pg_catalog.pg_trigger g
                               where g.tgrelid operator(pg_catalog.=) pg_catalog.to_regclass(t.name) and g.tgname = 'formation_two_phase') loop
    execute pg_catalog.format('create trigger formation_two_phase after insert or update or delete on %s'
                              ' for each row execute function ai._formation_two_phase()', r.rel);
    v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: a transaction that writes it and a worker commits in two phases', r.rel);
  end loop;

  -- 5. the anchors first, then every table whose foreign keys point at distributed tables only.
  -- While they are distributed, no table of ai or ai_archive forces row level security on its
  -- owner (this transaction only): Citus copies the rows and checks the foreign keys on the shards
  -- as the owner, which no policy lets through (ai._formation_caller refuses the owner).
  for r in select c.oid::pg_catalog.regclass as rel from pg_catalog.pg_class c
            where c.relnamespace in ('ai'::pg_catalog.regnamespace, 'ai_archive'::pg_catalog.regnamespace)
              and c.relkind = 'r' and c.relforcerowsecurity
              -- a table distributed already too, when one is left to distribute (a later deploy
              -- added it): the new table's foreign key is checked on the anchor's shards as the owner
              and (c.oid::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed)
                   or exists (select from pg_catalog.pg_class n
                               where n.relnamespace in ('ai'::pg_catalog.regnamespace, 'ai_archive'::pg_catalog.regnamespace)
                                 and n.relkind = 'r' and n.relforcerowsecurity
                                 and not (n.oid::pg_catalog.regclass::pg_catalog.text operator(pg_catalog.=) any (v_queue operator(pg_catalog.||) v_reference))
                                 and n.oid::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed))) loop
    execute pg_catalog.format('alter table %s no force row level security', r.rel);
    v_forced := v_forced operator(pg_catalog.||) r.rel;
  end loop;
  for v_pass in 1..10 loop
    v_progress := false;
    for r in select c.oid::pg_catalog.regclass as rel,
                    case when exists (select from pg_catalog.pg_attribute a where a.attrelid operator(pg_catalog.=) c.oid and a.attname = 'thread_id' and not a.attisdropped)
                         then 'thread_id' else 'owner' end as dist_column
               from pg_catalog.pg_class c
              where c.relnamespace in ('ai'::pg_catalog.regnamespace, 'ai_archive'::pg_catalog.regnamespace)
                and c.relkind = 'r'
                and not (c.oid::pg_catalog.regclass::pg_catalog.text operator(pg_catalog.=) any (v_queue operator(pg_catalog.||) v_reference))
                and exists (select from pg_catalog.pg_attribute a
                             where a.attrelid operator(pg_catalog.=) c.oid and a.attname in ('thread_id', 'owner') and not a.attisdropped)
                and c.oid::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed)
                -- every table it references is distributed already (or is itself)
                and not exists (select from pg_catalog.pg_constraint f
                                 where f.conrelid operator(pg_catalog.=) c.oid and f.contype = 'f'
                                   and f.confrelid operator(pg_catalog.<>) c.oid
                                   and f.confrelid::pg_catalog.regclass operator(pg_catalog.<>) all (v_distributed))
              order by (c.oid::pg_catalog.regclass::pg_catalog.text operator(pg_catalog.<>) v_anchor),
                       (c.oid::pg_catalog.regclass::pg_catalog.text operator(pg_catalog.<>) v_memory_anchor), 1 loop
      execute pg_catalog.format('select exists (select from %s)', r.rel) into v_rows;
      v_copied := v_copied or v_rows;
      execute pg_catalog.format('select pg_catalog.create_distributed_table(%L, %L, colocate_with => %L)',
        r.rel, r.dist_column,
        case when r.rel operator(pg_catalog.=) any (array[v_anchor, v_memory_anchor]::pg_catalog.regclass[]) then 'none'
             when r.dist_column operator(pg_catalog.=) 'thread_id' then v_anchor
             else v_memory_anchor end);
      v_distributed := v_distributed operator(pg_catalog.||) r.rel;
      v_done := v_done operator(pg_catalog.||) pg_catalog.format('%s: distributed by %s', r.rel, r.dist_column);
      v_progress := true;
    end loop;
    exit when not v_progress;
  end loop;
  foreach v_rel in array v_forced loop
    execute pg_catalog.format('alter table %s force row level security', v_rel);
  end loop;

  -- 6c. the fence on the shard (ai._fence_on_formation above): the claim writes it (a trigger
  -- on ai.agent_jobs) and ai._fence checks it. A later deploy of sessions_functions puts the
  -- one-server ai._fence back (the job's row on the coordinator, which a call delegated to a
  -- worker cannot read): ai.distribute() must run again, as for the carry (step 7).
  if not exists (select from pg_catalog.pg_trigger t
                  where t.tgrelid operator(pg_catalog.=) 'ai.agent_jobs'::pg_catalog.regclass and t.tgname = 'agent_jobs_thread_fence') then
    execute $t$create trigger agent_jobs_thread_fence
      after update of status, fencing_token on ai.agent_jobs
      for each row
      when (old.fencing_token is distinct from new.fencing_token
            or (old.status = 'IN_PROGRESS') is distinct from (new.status = 'IN_PROGRESS'))
      execute function ai._thread_fence_moved()$t$;
    v_done := v_done operator(pg_catalog.||) 'ai.agent_jobs: the claim writes the thread''s fence on its shard'::pg_catalog.text;
  end if;

  -- 6b, 6c, 7, 8. the rewrites of the deployed function bodies (ai._formation_rewrites above)
  v_done := v_done operator(pg_catalog.||) ai._formation_rewrites(dry_run => false);

  -- 6d. one node per step: the per-thread writes delegated to the worker that holds the thread,
  -- by thread_id, co-located with ai.agent_sessions (ai._formation_delegate above: each through
  -- an SQL wrapper and a strict entry, so that no NULL thread_id reaches Citus' hash). A call of
  -- one of them alone in its statement, outside a transaction block, goes whole to that worker
  -- and runs there as the caller (that connection is the caller's login: ai.current_owner() is
  -- its own, as on one server); its fence is the thread's (6c), on that worker. Citus delegates
  -- no call made inside a transaction block (not forced: citus' force_delegation would also
  -- delegate a call after ai.act_as, whose setting the worker would not see); those go through
  -- the coordinator with the identity carried (step 7), as every other call. After the rewrites:
  -- the body each entry calls is a copy of the rewritten one.
  -- Not in the transaction that copied rows to the shards (step 5, a database moved onto the
  -- formation): Citus then cancels create_distributed_function as a distributed deadlock. That
  -- call says so, and the next run delegates.
  if v_copied then
    v_done := v_done operator(pg_catalog.||) 'the per-thread writes are not delegated yet: run ai.distribute() again (not in the transaction that copied the rows)'::pg_catalog.text;
  else
    v_done := v_done operator(pg_catalog.||) ai._formation_delegate(dry_run => false);
  end if;

  if pg_catalog.cardinality(v_done) operator(pg_catalog.=) 0 then
    return 'distributed already: nothing to do';
  end if;
  return pg_catalog.array_to_string(v_done, E'\n');
end
$$;
comment on function ai.distribute() is
  'On the coordinator of a Citus formation, as the schema owner: distributes the schema (docs/scaling.md): on a database deployed before the citus extension (one server moved onto a formation), first every function of ai and ai_archive made on the workers; per-thread tables by thread_id co-located with ai.agent_sessions, the memory store by owner, the queue''s tables left on the coordinator, the small tables as reference tables, and the DDL Citus needs (policies without subqueries, human_approvals'' key with thread_id, no foreign key from the queue to the sessions), and the formation''s secret with which every SECURITY DEFINER function then carries the caller''s identity to the shards; the per-thread writes delegated to the worker that holds the thread, each through an SQL wrapper and a strict entry so that a NULL thread_id is AS002 (ai._formation_delegate); and a transaction that writes the queue and a worker commits in two phases (ai.formation_two_phase). Run it again after every deploy. Idempotent: returns what it did, one line each. Without the citus extension it changes nothing. AS007 for any other caller; AS071 (nothing done) when the coordinator is not in the formation''s metadata.';

revoke execute on function ai.distribute() from public;

commit;
