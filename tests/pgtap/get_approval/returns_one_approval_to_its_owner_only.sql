\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select is((select checkpoint_id from ai.get_approval(:'approval')), 'c1', 'the owner reads it');
set local role tenant_b;
select throws_ok(format('select ai.get_approval(%L)', :'approval'), 'AS001', format('approval %s not found', :'approval'), 'another tenant does not');
select * from finish();
rollback;
