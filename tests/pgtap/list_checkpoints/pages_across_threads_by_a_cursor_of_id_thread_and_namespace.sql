\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(6);
set local role tenant_a;
-- the same checkpoint ids in three threads and two namespaces: the id alone cannot be a cursor
select pg_temp.put_ckpt(t, c, null, ns) from unnest(array['t-p1', 't-p2', 't-p3']) t, unnest(array['c1', 'c2']) c,
  unnest(array['', 'sub']) ns;

create temporary table pages (page int, pos bigint, thread_id text, checkpoint_ns text, checkpoint_id text);
do $$
declare
  v_page int := 0;
  b text; bt text; bn text;
  n int;
begin
  loop
    v_page := v_page + 1;
    insert into pages
    select v_page, l.ordinality, l.thread_id, l.checkpoint_ns, l.checkpoint_id
    from ai.list_checkpoints(null, max_rows => 5, before => b, before_thread_id => bt, before_checkpoint_ns => bn)
         with ordinality l;
    get diagnostics n = row_count;
    exit when n < 5;
    select p.checkpoint_id, p.thread_id, p.checkpoint_ns into b, bt, bn from pages p where p.page = v_page
    order by p.pos desc limit 1;
  end loop;
end
$$;
select is((select count(*)::int from pages), 12, 'every row once: 3 threads x 2 ids x 2 namespaces');
select is((select count(distinct (thread_id, checkpoint_ns, checkpoint_id))::int from pages), 12, 'no row twice');
select is((select max(page) from pages), 3, 'in three pages of at most five');
select is(array(select thread_id || '/' || checkpoint_ns from pages where page = 1 order by pos),
          array['t-p3/sub', 't-p3/', 't-p2/sub', 't-p2/', 't-p1/sub'], 'newest id first, then thread and namespace descending');
select is((select count(*)::int from ai.list_checkpoints(null)), 12, 'omitted max_rows: the default page (100) holds all 12');
select throws_ok($$select * from ai.list_checkpoints(null, before_thread_id => 't-p1')$$, 'AS002', null,
                 'a cursor thread without before');

select * from finish();
rollback;
