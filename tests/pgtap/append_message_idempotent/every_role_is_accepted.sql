\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-m');
select is((ai.append_message_idempotent('t-m', r, to_jsonb(r))).role, r, format('role %s', r))
from unnest(array['system', 'user', 'assistant', 'tool_call', 'tool_result']) r;

select * from finish();
rollback;
