\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select pg_temp.put_ckpt('t-src', 'c1', null);
select pg_temp.put_ckpt('t-taken', 'c1', null);

select throws_ok($$select ai.fork_thread('t-src', 'c1', 't-taken')$$, 'AS005', null, 'a taken target id');
select throws_ok($$select ai.fork_thread('t-src', 'nope', 't-new')$$, 'AS001', null, 'an unknown checkpoint');
select throws_ok($$select ai.fork_thread('t-src', null, 't-new')$$, 'AS002', null, 'a NULL checkpoint id');
set local role tenant_b;
select throws_ok($$select ai.fork_thread('t-src', 'c1', 't-new')$$, 'AS001', null, 'another tenant''s thread');

select * from finish();
rollback;
