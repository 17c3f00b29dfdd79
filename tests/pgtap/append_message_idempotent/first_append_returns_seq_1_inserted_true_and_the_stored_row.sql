\ir ../fixtures/helpers.sql
begin;
select plan(8);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-m');
create temp table r as select * from ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}', 1);

select is((select seq from r), 1::bigint, 'seq 1');
select is((select inserted from r), true, 'inserted');
select is((select owner from r), 'tenant_a', 'owned by the session''s owner');
select is((select role from r), 'user', 'role');
select is((select content from r), '{"text": "hi"}'::jsonb, 'content');
select is((select turn from r), 1, 'turn');
select is((select created_at from r), '2030-01-01 00:00:00+00'::timestamptz, 'created now');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq($$select thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at from r$$,
                  $$select * from ai.session_messages where thread_id = 't-m'$$, 'the returned row is the stored row');
set local role tenant_a;

select * from finish();
rollback;
