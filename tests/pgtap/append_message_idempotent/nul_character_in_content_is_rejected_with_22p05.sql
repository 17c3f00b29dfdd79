\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"a\u0000b"'::jsonb)$$, '22P05', null,
                 'a NUL character in JSON is refused by Postgres before the function runs');
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'nothing written');

select * from finish();
rollback;
