\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;

select throws_ok($$select * from ai.checkpoints_between('t', '2026-01-02', '2026-01-01')$$, 'AS002', null, 'from after to');
select throws_ok($$select * from ai.checkpoints_between('t', null, '2026-01-01')$$, 'AS002', null, 'NULL bound');

select * from finish();
rollback;
