\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('fs-a-' || i, jsonb_build_object('batch', 'fs-match')) from generate_series(1, 3) i;
reset role;
set local role tenant_b;
select ai.create_session('fs-b-' || i, jsonb_build_object('batch', 'fs-other')) from generate_series(1, 3) i;
reset role;

set local role app_service;
select results_eq($$ select thread_id from ai.find_sessions(meta_path => '{batch}', meta_value => 'fs-match', max_rows => 2) $$,
                  $$ values ('fs-a-3'::text), ('fs-a-2') $$, 'a metadata filter: the first page is all matches, past the newer ones');
select results_eq($$ select thread_id from ai.find_sessions(meta_path => '{batch}', meta_value => 'fs-match', max_rows => 2, before_thread_id => 'fs-a-2') $$,
                  $$ values ('fs-a-1'::text) $$, 'and the cursor reaches the rest');
select throws_ok($$ select * from ai.find_sessions(younger_than => '-1 hour') $$, 'AS002', null, 'a negative age');
reset role;

set local role tenant_a;
select is_empty($$ select * from ai.find_sessions(owner => 'tenant_b') $$, 'a tenant naming another owner sees nothing');
select results_eq($$ select thread_id from ai.find_sessions(owner => 'tenant_a', meta_path => '{batch}', meta_value => 'fs-match', max_rows => 1) $$,
                  $$ values ('fs-a-3'::text) $$, 'its own, by name');

select * from finish();
rollback;
