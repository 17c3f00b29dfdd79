\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', null)$$, 'AS002', 'content must not be NULL', 'NULL content');
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'nothing written');

select * from finish();
rollback;
