\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select status from ai.finish_side_effect('qa1', 'k1', '{"id": 7}', :job, :token);
select is((select result from ai.finish_side_effect('qa1', 'k1', '{"id": 7}', :job, :token)), '{"id": 7}'::jsonb,
          'the same finish again (its answer was lost) returns the row');
select throws_ok(format($$select ai.finish_side_effect('qa1', 'k1', '{"id": 8}', %s, %s)$$, :job, :token), 'AS031',
                 'side effect k1 of thread qa1 is not reserved by the caller', 'another result for a finished key is refused');
select * from finish();
rollback;
