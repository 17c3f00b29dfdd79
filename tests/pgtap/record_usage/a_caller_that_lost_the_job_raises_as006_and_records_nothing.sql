\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select is((ai.record_usage('qa1', 'k0', 'm', 1, 1, 0.1, '{}', :id, :token)).inserted, true, 'the holder records');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format($$select ai.record_usage('qa1', 'k1', 'm', 1, 1, 0.1, '{}', %s, %s)$$, :id, :token), 'AS006', null,
                 'after the lease ended');
reset role;
select is((select count(*)::int from ai.usage_records where thread_id = 'qa1'), 1, 'only the holder''s record');

select * from finish();
rollback;
