\ir ../fixtures/helpers.sql
begin;
select plan(17);

set local role tenant_a;
select ai.create_session('t-a');
set local role outsider;
select throws_ok(sql, '42501', 'permission denied for schema ai', format('outsider: %s', sql))
from unnest(array[
  'select ai.now()',
  'select ai.current_owner()',
  'select ai.sees_all_owners()',
  'select ai.act_as(''x'')',
  'select ai.create_session(''t-o'')',
  'select ai.get_session(''t-a'')',
  'select ai.set_session_status(''t-a'', ''failed'')',
  'select ai.record_event(''t-a'', ''x'')',
  'select * from ai.get_events(''t-a'')',
  'select ai.append_message_idempotent(''t-a'', ''user'', ''"x"'')',
  'select * from ai.get_messages(''t-a'')',
  'select ai.estimate_tokens(''{}'')',
  'select ai.message_key(''t'', ''user'', ''{}'')',
  'select * from ai.agent_sessions',
  'select * from ai.session_messages',
  'select * from ai.session_events',
  'select * from ai.error_codes'
]) sql;

select * from finish();
rollback;
