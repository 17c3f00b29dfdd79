\ir ../fixtures/helpers.sql
begin;
select plan(3);

select ok(has_function_privilege('ai_user', 'ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb)', 'execute'), 'ai_user');
select ok(has_function_privilege('ai_service', 'ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb)', 'execute'), 'ai_service');
select ok(not has_function_privilege('public', 'ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb)', 'execute'), 'not public');

select * from finish();
rollback;
