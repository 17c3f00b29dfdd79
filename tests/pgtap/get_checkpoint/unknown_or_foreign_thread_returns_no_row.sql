\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.put_ckpt('t-a', 'c1', null);

select is_empty($$select * from ai.get_checkpoint('t-nobody')$$, 'unknown thread: no row');
select is_empty($$select * from ai.get_checkpoint('t-a', '', 'c-missing')$$, 'unknown checkpoint: no row');
set local role tenant_b;
select is_empty($$select * from ai.get_checkpoint('t-a')$$, 'another tenant''s thread: no row');

select * from finish();
rollback;
