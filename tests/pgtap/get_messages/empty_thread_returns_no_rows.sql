\ir ../fixtures/helpers.sql
begin;
select plan(1);

set local role tenant_a;
select ai.create_session('t-m');
select is_empty($$select * from ai.get_messages('t-m')$$, 'a thread without messages returns nothing (not AS001)');

select * from finish();
rollback;
