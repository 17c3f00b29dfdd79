\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('tn-own') is not null as created \gset
set local role tenant_b;
select throws_ok($$select * from ai.session_timeline_newest('tn-own')$$, 'AS001', null, 'another tenant''s thread is unknown');
select throws_ok($$select ai.session_timeline_total('tn-own')$$, 'AS001', null, 'its total too');
select throws_ok($$select * from ai.session_timeline_newest('tn-nobody')$$, 'AS001', null, 'an unknown thread');

select * from finish();
rollback;
