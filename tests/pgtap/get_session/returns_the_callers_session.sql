\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-get', '{"k": 1}');
select is((ai.get_session('t-get')).thread_id, 't-get', 'the thread');
select is((ai.get_session('t-get')).config, '{"k": 1}'::jsonb, 'its config');
select is((ai.get_session('t-get')).owner, 'tenant_a', 'its owner');

select * from finish();
rollback;
