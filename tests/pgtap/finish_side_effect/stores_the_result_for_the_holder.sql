\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select set_config('ai.frozen_now', '2030-01-01 00:00:10+00', true) is not null as moved \gset
select is((select (status, result, finished_at)::text from ai.finish_side_effect('qa1', 'k1', '{"id": 7}', :job, :token)),
          '(done,"{""id"": 7}","2030-01-01 00:00:10+00")', 'done, with the result and the time');
select is((select result from ai.get_side_effect('qa1', 'k1')), '{"id": 7}'::jsonb, 'get_side_effect reads it back');
-- without a job: the attempt is the token
select attempt as att from ai.begin_side_effect('qa1', 'k2', '{}') \gset
select is((select status from ai.finish_side_effect('qa1', 'k2', '{"ok": true}', null, :att)), 'done', 'a jobless holder finishes with its attempt');
select * from finish();
rollback;
