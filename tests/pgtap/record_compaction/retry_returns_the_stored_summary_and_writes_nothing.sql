\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/compaction.sql
select ai.record_compaction('c1', 'summary of 1..40', 40, 30);
select ai.record_compaction('c1', 'summary of 1..45', 45, 30);

select is((ai.record_compaction('c1', 'summary of 1..40', 40, 30)).inserted, false,
          'a retry of an older compaction returns it, even after a newer one');
select is((ai.record_compaction('c1', 'summary of 1..45', 45, 30)).seq, 52::bigint, 'a retry returns the original seq');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select max(seq) from ai.session_messages where thread_id = 'c1'), 52::bigint, 'nothing was written');
set local role tenant_a;
select throws_ok($$select ai.record_compaction('c1', 'another text', 45)$$, 'AS005', null,
                 'the same range with another summary is a conflict');

select * from finish();
rollback;
