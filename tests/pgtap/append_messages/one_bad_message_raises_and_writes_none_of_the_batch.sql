\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_messages('t-m', '[{"role": "user", "content": "ok"}, {"role": "robot", "content": "x"}]')$$,
                 'AS002', null, 'an unknown role in the batch');
select throws_ok($$select ai.append_messages('t-m', '[{"role": "user", "content": "ok"}, {"role": "user"}]')$$,
                 'AS002', null, 'a message without content');
select throws_ok($$select ai.append_messages('t-m', '[{"role": "user", "content": "ok", "turn": 1.5}]')$$,
                 'AS002', null, 'a turn that is not an integer');
select throws_ok($$select ai.append_messages('t-m', '[{"role": "user", "content": "ok", "token_count": "many"}]')$$,
                 'AS002', null, 'a token_count that is not a number');
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'nothing written');

select * from finish();
rollback;
