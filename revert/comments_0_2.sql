-- Revert agent-state:comments_0_2 from pg
-- The comments as the released table changes set them.
begin;

comment on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) is
  'Internal: called by the CHECK of ai.agent_sessions rows only for a row that breaks a rule (thread_id length, status, config an object, last_seq, completed_at with a final status); raises 23514 naming the rule, true when none is broken.';

comment on function ai._check_message_row(bigint, text, integer, text) is
  'Internal: called by the CHECK of ai.session_messages rows only for a row that breaks a rule (seq, role, token_count, idempotency key); raises 23514 naming the rule, true when none is broken.';

comment on function ai._check_checkpoint_row(jsonb, jsonb) is
  'Internal: called by the CHECK of ai.checkpoints rows only for a row that breaks a rule (metadata and channel_versions are JSON objects); raises 23514 naming it, true when none is broken.';

comment on function ai._check_side_effect_row(text, text, integer, integer, timestamptz) is
  'Internal: called by the CHECK of ai.side_effects rows only for a row that breaks a rule (idempotency key length, status, attempt, takeovers, a done one''s finished_at); raises 23514 naming the rule, true when none is broken.';

comment on function ai._check_approval_row(text, text, jsonb, timestamptz) is
  'Internal: called by the CHECK of ai.human_approvals rows only for a row that breaks a rule (checkpoint_id length, status, a resolved approval''s decision, a cancelled one''s); raises 23514 naming the rule, true when none is broken.';

comment on table ai.error_codes is 'The custom SQLSTATEs agent-state raises, with their names and meanings.';

commit;
