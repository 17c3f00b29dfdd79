\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select ai.create_session('t-other');
select (ai.append_message_idempotent(case when i % 3 = 0 then 't-other' else 't-m' end, 'user', to_jsonb(i))).seq
from generate_series(1, 30) i;

reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq($$select seq from ai.session_messages where thread_id = 't-m' order by seq$$,
                  $$select generate_series(1, 20)::bigint$$, 't-m is numbered 1..20');
select results_eq($$select seq from ai.session_messages where thread_id = 't-other' order by seq$$,
                  $$select generate_series(1, 10)::bigint$$, 'each thread has its own numbering');
set local role tenant_a;
select is((ai.get_session('t-m')).last_seq, 20::bigint, 'last_seq is the newest seq');

select * from finish();
rollback;
