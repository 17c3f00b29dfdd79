\ir ../fixtures/helpers.sql
begin;
select plan(7);

-- three matching jobs of tenant_a first, then three newer ones that do not match (tenant_b's)
set local role tenant_a;
select ai.create_session('fj-a');
select ai.enqueue_job('fj-a', jsonb_build_object('team', jsonb_build_object('name', 'refunds'), 'i', i), 'fj-q')
from generate_series(1, 3) i;
reset role;
set local role tenant_b;
select ai.create_session('fj-b');
select ai.enqueue_job('fj-b', jsonb_build_object('team', jsonb_build_object('name', 'other'), 'i', i), 'fj-q')
from generate_series(4, 6) i;
reset role;

set local role app_service;
select results_eq($$ select (payload ->> 'i')::int from ai.find_jobs('fj-q', meta_path => '{team,name}', meta_value => 'refunds', max_rows => 2) $$,
                  $$ values (3), (2) $$, 'a metadata filter: the first page is all matches, past the newer ones');
select results_eq(format($$ select (payload ->> 'i')::int from ai.find_jobs('fj-q', meta_path => '{team,name}', meta_value => 'refunds', max_rows => 2, before_job_id => %s) $$,
                         (select job_id from ai.find_jobs('fj-q', meta_path => '{team,name}', meta_value => 'refunds', max_rows => 2) order by job_id limit 1)),
                  $$ values (1) $$, 'and the cursor reaches the rest');
select results_eq($$ select (payload ->> 'i')::int from ai.find_jobs('fj-q', owner => 'tenant_a', max_rows => 2) $$,
                  $$ values (3), (2) $$, 'an owner filter, the same');
select is((select count(*) from ai.find_jobs('fj-q', younger_than => '1 hour'))::int, 6, 'an age filter by ai.now()');
reset role;

set local role tenant_a;
select is_empty($$ select * from ai.find_jobs('fj-q', owner => 'tenant_b') $$, 'a tenant naming another owner sees nothing');
select results_eq($$ select (payload ->> 'i')::int from ai.find_jobs('fj-q', meta_path => '{i}', meta_value => '2') $$,
                  $$ values (2) $$, 'a number compares as its JSON text');
select throws_ok($$ select * from ai.find_jobs(meta_path => '{team}') $$, 'AS002', null, 'a path without a value');

select * from finish();
rollback;
