\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select throws_ok($$select * from ai.usage_summary(null, now())$$, 'AS002', null, 'NULL since');
select throws_ok($$select * from ai.usage_summary('2030-01-02', '2030-01-01')$$, 'AS002', null, 'since after until');
select throws_ok($$select * from ai.usage_summary('2030-01-01', '2030-01-02', array['owner', 'colour'])$$, 'AS002', null,
                 'an unknown dimension');
select throws_ok($$select * from ai.usage_summary('2030-01-01', '2030-01-02', null)$$, 'AS002', null, 'NULL grouping');

select * from finish();
rollback;
