\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select is((select (status, last_error)::text from ai.abandon_side_effect('qa1', 'k1', :job, :token, 'declined')), '(abandoned,declined)',
          'abandoned, with the error');
select is((select outcome from ai.begin_side_effect('qa1', 'k1', '{}')), 'execute', 'anyone may reserve it again');
select * from finish();
rollback;
