\ir ../fixtures/helpers.sql
begin;
select plan(8);
\ir ../fixtures/side_effects.sql

select throws_ok($$select ai.begin_side_effect('qa1', null)$$, 'AS002', 'idempotency_key must not be NULL', 'NULL key');
select throws_ok($$select ai.begin_side_effect('qa1', '')$$, 'AS002', 'idempotency_key must not be empty', 'empty key');
select throws_ok($$select ai.begin_side_effect('qa1', repeat('k', 256))$$, 'AS002', 'idempotency_key is longer than 255 characters', 'long key');
select throws_ok($$select ai.begin_side_effect('qa1', 'k', null)$$, 'AS002', 'request must not be NULL', 'NULL request');
select throws_ok(format($$select ai.begin_side_effect('qa1', 'k', '{}', %s, null)$$, :job), 'AS002', 'fencing_token must not be NULL when job_id is given', 'job without token');
select throws_ok($$select ai.begin_side_effect('qa1', 'k', '{}', reservation => '0 seconds')$$, 'AS002', 'reservation must be a positive interval', 'zero reservation');
select throws_ok(format($$select ai.begin_side_effect('qa2', 'k', '{}', %s, %s)$$, :job, :token), 'AS002', format('job %s does not advance thread qa2', :job), 'a job of another thread');
set local role tenant_a;
select throws_ok($$select ai.begin_side_effect('qb1', 'k')$$, 'AS001', 'thread qb1 not found', 'another tenant''s thread is not found');
select * from finish();
rollback;
