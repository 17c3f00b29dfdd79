\ir ../fixtures/helpers.sql
begin;
select plan(7);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-m');
create temp table first as select * from ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}', 1);
select (ai.get_session('t-m')).updated_at as updated_before \gset

set local ai.frozen_now = '2030-01-02 00:00:00+00';
create temp table retry as select * from ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}', 1);
create temp table retry_key as select * from ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}', 1,
  (select idempotency_key from first));

select is((select inserted from retry), false, 'the retry reports inserted = false');
select results_eq($$select thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at from retry$$,
                  $$select thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at from first$$,
                  'the retry returns the original row');
select is((select seq from retry_key), 1::bigint, 'a retry passing the same key explicitly returns it too');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-m'), 1, 'one message');
set local role tenant_a;
select is((ai.get_session('t-m')).last_seq, 1::bigint, 'last_seq unchanged');
select is((ai.get_session('t-m')).updated_at, :'updated_before'::timestamptz, 'the session was not touched');
select is((select created_at from retry), '2030-01-01 00:00:00+00'::timestamptz, 'created_at is the original''s');

select * from finish();
rollback;
