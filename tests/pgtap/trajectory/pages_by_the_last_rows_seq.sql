\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;
select ai.create_session('tj-1');
select ai.append_message_idempotent('tj-1', 'user', jsonb_build_object('n', i)) from generate_series(1, 5) i;

select results_eq($$select seq from ai.trajectory('tj-1', max_rows => 2)$$, $$values (1::bigint), (2::bigint)$$, 'the first page');
select results_eq($$select seq from ai.trajectory('tj-1', max_rows => 10, after_seq => 2)$$,
                  $$values (3::bigint), (4::bigint), (5::bigint)$$, 'the next page after the last seq');

select * from finish();
rollback;
