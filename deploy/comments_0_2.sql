-- Deploy agent-state:comments_0_2 to pg
-- requires: errors
-- requires: sessions
-- requires: messages
-- requires: checkpoints
-- requires: side_effects
-- requires: human_in_the_loop
--
-- Comments that state what is (issue 22). COMMENT is no definition: a change planned after the
-- release may set the comment of an object of a released table change (CONTRIBUTING.md), whose
-- script stays as released.
--
-- The row-rule functions of five tables: their CHECK is the bare call, ai._check_<table>_row(...),
-- so PostgreSQL calls the function for every row inserted or updated, not only for one that
-- breaks a rule (only ai.agent_jobs puts a plain expression in front, and its comment says so).
-- tests/python/test_docs_facts.py holds each row-rule comment to the shape of its CHECK.
begin;

comment on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) is
  'Internal: the row rules of ai.agent_sessions, called by its CHECK for every row written (and of its ai_archive twin): thread_id length, status, config an object, last_seq, completed_at with a final status; raises 23514 naming the rule a row breaks, true when none is broken.';

comment on function ai._check_message_row(bigint, text, integer, text) is
  'Internal: the row rules of ai.session_messages, called by its CHECK for every row written (and of its ai_archive twin): seq, role, token_count, idempotency key; raises 23514 naming the rule a row breaks, true when none is broken.';

comment on function ai._check_checkpoint_row(jsonb, jsonb) is
  'Internal: the row rules of ai.checkpoints, called by its CHECK for every row written (and of its ai_archive twin): metadata and channel_versions are JSON objects; raises 23514 naming the rule a row breaks, true when none is broken.';

comment on function ai._check_side_effect_row(text, text, integer, integer, timestamptz) is
  'Internal: the row rules of ai.side_effects, called by its CHECK for every row written (and of its ai_archive twin): idempotency key length, status, attempt, takeovers, a done one''s finished_at; raises 23514 naming the rule a row breaks, true when none is broken.';

comment on function ai._check_approval_row(text, text, jsonb, timestamptz) is
  'Internal: the row rules of ai.human_approvals, called by its CHECK for every row written (and of its ai_archive twin): checkpoint_id length, status, a resolved approval''s decision, a cancelled one''s; raises 23514 naming the rule a row breaks, true when none is broken.';

comment on table ai.error_codes is
  'The custom SQLSTATEs agent-state raises, with their names and meanings (docs/errors.md). Read by the schema owner only: no role holds a grant on it.';

commit;
