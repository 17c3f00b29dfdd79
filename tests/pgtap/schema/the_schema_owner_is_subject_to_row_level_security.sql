\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- The functions run as the schema owner; RLS (forced on every table) keeps tenants apart inside
-- them only when the owner is neither a superuser nor BYPASSRLS. The deploy refuses such an owner.
select ok((select not (r.rolsuper or r.rolbypassrls) from pg_namespace n join pg_roles r on r.oid = n.nspowner
           where n.nspname = 'ai'), 'the owner of schema ai is no superuser and has no BYPASSRLS');

select * from finish();
rollback;
