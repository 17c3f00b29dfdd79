\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- eval_runs_candidate holds (owner, candidate, created_at): a candidate of 1000 bytes (counted in
-- bytes, issue 37) beside an owner of 255 bytes fits in random four-byte characters.
select string_agg(chr(65536 + (i * 7919) % 1000000), '') || 'abc' as owner255 from generate_series(1, 63) i \gset
select string_agg(chr(65536 + (i * 6007) % 1000000), '') as c1000 from generate_series(1, 250) i \gset

set local role app_service;
select ai.act_as(:'owner255');
select ai.create_session('t-eval');
select is((ai.record_eval_run('t-eval', :'c1000', true)).candidate, :'c1000', 'a candidate of 1000 bytes (250 four-byte characters) is stored');
select throws_ok(format('select ai.record_eval_run(%L, %L, true)', 't-eval', :'c1000' || 'a'),
                 'AS002', 'candidate is longer than 1000 bytes (1001 bytes of UTF-8)', 'one of 1001 bytes is refused up front');
select throws_ok(format('select ai.record_eval_run(%L, %L, true)', 't-eval', repeat('a', 1001)),
                 'AS002', 'candidate is longer than 1000 bytes (1001 bytes of UTF-8)', 'in ASCII the limit is the same');

select * from finish();
rollback;
