\ir ../fixtures/helpers.sql
begin;
select plan(4);
set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true);
select ai.create_session('tl-1');
-- at one instant: messages, an event and a checkpoint, so the cursor must break ties by item and ref
select ai.append_message_idempotent('tl-1', 'user', jsonb_build_object('n', i)) from generate_series(1, 3) i;
select ai.record_event('tl-1', 'tool_call', '{}');
select ai.put_checkpoint('tl-1', '', 'c1', null, 'test', '\x01'::bytea);

create temporary table seen as select 0 as page, 0::bigint as pos, * from ai.session_timeline('tl-1') with ordinality where false;
do $$
declare
  v_page int := 0; n int; a timestamptz; i text; r text;
begin
  loop
    v_page := v_page + 1;
    insert into seen select v_page, t.ordinality, t.created_at, t.item, t.ref, t.label, t.detail
    from ai.session_timeline('tl-1', 2, a, i, r) with ordinality t;
    get diagnostics n = row_count;
    exit when n < 2;
    select s.created_at, s.item, s.ref into a, i, r from seen s where s.page = v_page order by s.pos desc limit 1;
  end loop;
end
$$;
select results_eq($$select item || ':' || ref from seen order by page, pos$$,
                  $$select item || ':' || ref from ai.session_timeline('tl-1')$$, 'pages of two read as one call does');
select is((select count(distinct (item, ref))::int from seen), (select count(*)::int from ai.session_timeline('tl-1')),
          'every item once');
select throws_ok($$select * from ai.session_timeline('tl-1', 10, now(), 'message', null)$$, 'AS002', null, 'a partial cursor');
select throws_ok($$select * from ai.session_timeline('tl-1', 10, now(), 'message', 'x')$$, 'AS002', null, 'a message ref that is not a number');

select * from finish();
rollback;
