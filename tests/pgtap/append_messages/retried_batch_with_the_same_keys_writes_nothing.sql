\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_messages('t-m', '[{"role": "user", "content": "a", "idempotency_key": "b1:0"},
                                   {"role": "user", "content": "a", "idempotency_key": "b1:1"}]');
select results_eq(
  $$select seq, inserted from ai.append_messages('t-m', '[{"role": "user", "content": "a", "idempotency_key": "b1:0"},
                                                         {"role": "user", "content": "a", "idempotency_key": "b1:1"}]')$$,
  $$values (1::bigint, false), (2::bigint, false)$$,
  'the retry returns the originals, not inserted');
select is((ai.get_session('t-m')).last_seq, 2::bigint, 'still two messages');

select * from finish();
rollback;
