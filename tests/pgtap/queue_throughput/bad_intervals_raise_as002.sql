\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role app_service;
select throws_ok($$ select * from ai.queue_throughput('default', null) $$, 'AS002', null, 'since NULL');
select throws_ok($$ select * from ai.queue_throughput('default', '1 hour', '0 seconds') $$, 'AS002', null, 'an empty bucket');
select throws_ok($$ select * from ai.queue_throughput('default', '1 minute', '5 minutes') $$, 'AS002', null,
  'a bucket longer than since');
select throws_ok($$ select * from ai.queue_throughput('default', '40 days') $$, 'AS002', null, 'since over 31 days');
select throws_ok($$ select * from ai.queue_throughput('', '1 hour') $$, 'AS002', null, 'an empty queue name');

select * from finish();
rollback;
