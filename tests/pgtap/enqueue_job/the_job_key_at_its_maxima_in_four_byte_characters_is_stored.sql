\ir ../fixtures/helpers.sql
begin;
select plan(6);

-- The unique index agent_jobs_idempotency_key holds (owner, queue, idempotency_key): an acting
-- owner of 255 bytes (counted in bytes, issue 37) beside a queue name and a key of 255 random
-- characters of four bytes each fits its 2704 bytes, where an owner of 255 such characters did not.
select string_agg(chr(65536 + (i * 7919) % 1000000), '') || 'abc' as owner255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 6007) % 1000000), '') as q255 from generate_series(1, 255) i \gset
select string_agg(chr(65536 + (i * 4001) % 1000000), '') as k255 from generate_series(1, 255) i \gset

set local role app_service;
select is(ai.act_as(:'owner255'), :'owner255', 'an owner of 255 bytes (63 characters of four bytes and 3 of one)');
select lives_ok($$select ai.create_session('t-key')$$, 'its session');
select is((ai.enqueue_job('t-key', '{}', :'q255', idempotency_key => :'k255')).owner, :'owner255',
          'a job with queue name and idempotency key of 255 four-byte characters is stored');
select is((ai.enqueue_job('t-key', '{}', :'q255', idempotency_key => :'k255')).queue, :'q255', 'and found again by its key');
select throws_ok(format('select ai.act_as(%L)', :'owner255' || 'a'), 'AS002', 'owner is longer than 255 bytes (256 bytes of UTF-8)',
                 'an owner of 256 bytes is refused up front');

select throws_ok(format('select ai.act_as(%L)', :'k255'), 'AS002', 'owner is longer than 255 bytes (1020 bytes of UTF-8)',
                 'the former maximum, 255 four-byte characters, is refused up front (its job key was 54000)');

select * from finish();
rollback;
