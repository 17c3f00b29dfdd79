\ir ../fixtures/helpers.sql
begin;
select plan(8);

set local role app_service;
select throws_ok($$select ai.set_job_key(null, 'k')$$, 'AS002', null, 'NULL queue');
select throws_ok($$select ai.set_job_key('default', '')$$, 'AS002', null, 'empty key');
select throws_ok($$select ai.set_job_key('default', 'k', weight => 0)$$, 'AS002', null, 'weight 0');
select throws_ok($$select ai.set_job_key('default', 'k', weight => 'NaN')$$, 'AS002', null, 'weight NaN');
select throws_ok($$select ai.set_job_key('default', 'k', weight => null)$$, 'AS002', null, 'weight NULL');
select throws_ok($$select ai.set_job_key('default', 'k', max_in_flight => -1)$$, 'AS002', null, 'max_in_flight below 0');
select throws_ok($$select ai.set_job_key('default', 'k', rate_per_minute => 0)$$, 'AS002', null, 'rate_per_minute 0');
select throws_ok($$select ai.set_job_key('default', 'k', burst => 5)$$, 'AS002', null, 'a burst without a rate');

select * from finish();
rollback;
