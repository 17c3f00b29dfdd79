\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select results_eq(
  $$select seq, role, content, inserted from ai.append_messages('t-m',
      '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": {"a": 1}, "turn": 2, "token_count": 7}]')$$,
  $$values (1::bigint, 'user', '"hi"'::jsonb, true), (2::bigint, 'assistant', '{"a": 1}'::jsonb, true)$$,
  'both messages, numbered in order, inserted');
select is((select turn from ai.get_messages('t-m') where seq = 2), 2, 'turn stored');
select is((select token_count from ai.get_messages('t-m') where seq = 2), 7, 'token_count stored');

select * from finish();
rollback;
