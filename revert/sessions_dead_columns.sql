-- Revert agent-state:sessions_dead_columns from pg
--
-- The columns come back (at the end of the row: PostgreSQL adds a column last; both tables alike,
-- so a copy between them by position still matches) with the values they stand for, computed from
-- the rows, as a 0.1.0 append and put expect them: last_seq the newest message's seq (a 0.1.0
-- append takes last_seq + 1), current_checkpoint_id the newest root checkpoint.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create function ai._check_session_row(thread_id text, status text, config jsonb, last_seq bigint,
                                      completed_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if (pg_catalog.char_length(thread_id) between 1 and 255) is not true then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'a thread_id has 1 to 255 characters';
  end if;
  if status is null or status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = format('session status %s is not active, waiting, completed, failed or cancelled',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if pg_catalog.jsonb_typeof(config) is distinct from 'object' then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'a session''s config is a JSON object';
  end if;
  if (last_seq >= 0) is not true then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = format('last_seq must be 0 or more, not %s', coalesce(last_seq::text, 'NULL'));
  end if;
  if (completed_at is not null) <> (status in ('completed', 'failed', 'cancelled')) then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'completed_at is set exactly when a session is completed, failed or cancelled';
  end if;
  return true;
end
$$;
comment on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) is
  'Internal: the row rules of ai.agent_sessions, called by its CHECK for every row written (and of its ai_archive twin): thread_id length, status, config an object, last_seq, completed_at with a final status; raises 23514 naming the rule a row breaks, true when none is broken.';
revoke execute on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) from public;

alter table ai.agent_sessions
  drop constraint agent_sessions_row_check,
  add column current_checkpoint_id text,
  add column last_seq bigint not null default 0,
  set (fillfactor = 80);
alter table ai_archive.agent_sessions
  drop constraint agent_sessions_row_check,
  add column current_checkpoint_id text,
  add column last_seq bigint not null default 0;

-- The schema owner is subject to row level security (FORCE), which would show it no tenant's
-- rows: lifted for this transaction on the tables the update reads and writes, then forced again.
alter table ai.agent_sessions no force row level security;
alter table ai.session_messages no force row level security;
alter table ai.checkpoints no force row level security;
alter table ai_archive.agent_sessions no force row level security;
alter table ai_archive.session_messages no force row level security;
alter table ai_archive.checkpoints no force row level security;
update ai.agent_sessions s
set last_seq = coalesce((select m.seq from ai.session_messages m where m.thread_id = s.thread_id
                         order by m.seq desc limit 1), 0),
    current_checkpoint_id = (select c.checkpoint_id from ai.checkpoints c
                             where c.thread_id = s.thread_id and c.checkpoint_ns = ''
                             order by c.checkpoint_id desc limit 1);
update ai_archive.agent_sessions s
set last_seq = coalesce((select m.seq from ai_archive.session_messages m where m.thread_id = s.thread_id
                         order by m.seq desc limit 1), 0),
    current_checkpoint_id = (select c.checkpoint_id from ai_archive.checkpoints c
                             where c.thread_id = s.thread_id and c.checkpoint_ns = ''
                             order by c.checkpoint_id desc limit 1);

alter table ai.agent_sessions force row level security;
alter table ai.session_messages force row level security;
alter table ai.checkpoints force row level security;
alter table ai_archive.agent_sessions force row level security;
alter table ai_archive.session_messages force row level security;
alter table ai_archive.checkpoints force row level security;

alter table ai.agent_sessions
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, last_seq, completed_at));
alter table ai_archive.agent_sessions
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, last_seq, completed_at));

drop function ai._check_session_row(text, text, jsonb, timestamptz);

comment on table ai.agent_sessions is 'One row per agent run (thread): owner, status, configuration, message counter and current checkpoint.';
comment on column ai.agent_sessions.last_seq is 'The seq of the newest message; appends bump it under the row lock, so seq has no gaps.';
comment on column ai.agent_sessions.current_checkpoint_id is 'The newest checkpoint of the root namespace (kept by the checkpoint functions).';

commit;
