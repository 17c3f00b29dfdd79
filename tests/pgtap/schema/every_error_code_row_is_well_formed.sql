\ir ../fixtures/helpers.sql
begin;
select plan(3);

select is_empty($$
  select sqlstate from ai.error_codes
  where sqlstate !~ '^AS[0-9]{3}$' or name !~ '^[a-z][a-z_]*$' or coalesce(btrim(description), '') = ''
     or description !~ '\.$'$$,
  'every row: sqlstate ASnnn, snake_case name, a description that is a sentence');
select results_eq($$select sqlstate, name from ai.error_codes where sqlstate between 'AS001' and 'AS009' order by sqlstate$$,
  $$values ('AS001', 'not_found'), ('AS002', 'invalid_argument'), ('AS003', 'too_large'), ('AS004', 'invalid_transition'),
           ('AS005', 'conflict'), ('AS006', 'lease_lost'), ('AS007', 'permission_denied'),
           ('AS008', 'not_an_owner')$$,
  'the foundation codes');
set local role tenant_a;
select throws_ok($$select count(*) from ai.error_codes$$, '42501', null,
  'tenants hold no table privilege, not even on the list (it is docs/errors.md)');

select * from finish();
rollback;
