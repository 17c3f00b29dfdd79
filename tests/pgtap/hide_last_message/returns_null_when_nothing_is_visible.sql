\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ok((ai.hide_last_message('t-m')).seq is null, 'empty thread');
select ai.append_message_idempotent('t-m', 'user', '"x"');
select ai.hide_last_message('t-m');
select ok((ai.hide_last_message('t-m')).seq is null, 'everything hidden already');

select * from finish();
rollback;
