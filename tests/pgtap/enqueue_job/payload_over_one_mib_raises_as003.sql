\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job('qa1', jsonb_build_object('x', repeat(md5(random()::text), 40000)))$$, 'AS003', null, 'a payload over 1 MiB is refused');

select * from finish();
rollback;
