\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
set local role tenant_a;
select is((select status from ai.get_side_effect('qa1', 'k1')), 'reserved', 'the owner reads its ledger');
set local role tenant_b;
select throws_ok($$select ai.get_side_effect('qa1', 'k1')$$, 'AS001', 'side effect k1 of thread qa1 not found', 'another tenant does not');
select * from finish();
rollback;
