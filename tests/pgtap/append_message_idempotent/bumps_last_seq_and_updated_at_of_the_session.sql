\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-m');
set local ai.frozen_now = '2030-01-03 00:00:00+00';
select ai.append_message_idempotent('t-m', 'user', '"x"');
select is((ai.get_session('t-m')).last_seq, 1::bigint, 'last_seq is 1');
select is((ai.get_session('t-m')).updated_at, '2030-01-03 00:00:00+00'::timestamptz, 'updated_at is the append''s time');

select * from finish();
rollback;
