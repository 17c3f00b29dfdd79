\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role app_service;
select throws_ok($$select ai.complete_jobs(array[1, 2]::bigint[], array[1]::bigint[])$$, 'AS002', null, 'tokens missing');
select throws_ok($$select ai.complete_jobs(array[1]::bigint[], array[1]::bigint[], array['{}', '{}']::jsonb[])$$, 'AS002', null, 'too many results');
select throws_ok($$select ai.complete_jobs(null, array[1]::bigint[])$$, 'AS002', null, 'NULL job_ids');
select throws_ok($$select ai.complete_jobs(array(select generate_series(1, 1001))::bigint[], array(select generate_series(1, 1001))::bigint[])$$, 'AS002', null, 'more than 1000');

select * from finish();
rollback;
