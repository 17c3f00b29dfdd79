\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;

select throws_ok($$select ai.put_checkpoint('t-fence', '', 'c1', null, 'test', '\x01', job_id => 1, fencing_token => 1)$$,
                 'AS021', null, 'a fenced checkpoint needs ai.fenced_write');
select is((select count(*)::int from ai.checkpoints where thread_id = 't-fence'), 0, 'nothing is written');

select * from finish();
rollback;
