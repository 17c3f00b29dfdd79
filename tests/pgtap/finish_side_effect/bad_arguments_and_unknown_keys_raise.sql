\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/side_effects.sql

select throws_ok(format($$select ai.finish_side_effect('qa1', 'nope', '{}', %s, %s)$$, :job, :token), 'AS001',
                 'side effect nope of thread qa1 not found', 'unknown key');
select throws_ok($$select ai.finish_side_effect('qa1', 'k', '{}')$$, 'AS002',
                 'fencing_token must not be NULL (without a job: the attempt begin_side_effect returned)', 'no token');
select throws_ok(format($$select ai.finish_side_effect('qa1', 'k', null, %s, %s)$$, :job, :token), 'AS002', 'result must not be NULL', 'NULL result');
select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select throws_ok(format($$select ai.finish_side_effect('qa1', 'k1', jsonb_build_object('x', repeat('x', 1100000)), %s, %s)$$, :job, :token),
                 'AS003', null, 'a result over 1 MiB');
set local role tenant_b;
select throws_ok($$select ai.finish_side_effect('qa1', 'k1', '{}', null, 1)$$, 'AS001', 'side effect k1 of thread qa1 not found', 'another tenant''s key is not found');
select * from finish();
rollback;
