\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- A row about a checkpoint names it checkpoint_id and its parent parent_checkpoint_id, whichever
-- function returns it (the table's own names, as get_checkpoint and checkpoints_between do): a
-- client reads lineage, tree and range rows with the same code.
create temporary view fn_columns as
  select p.oid::regprocedure::text as fn, c.name
  from pg_proc p
  cross join lateral (
    select u.n as name from unnest(p.proargnames, p.proargmodes) as u(n, m) where u.m in ('o', 't', 'b')
    union all
    select a.attname::text from pg_attribute a join pg_type t on t.typrelid = a.attrelid
    where t.oid = p.prorettype and a.attnum > 0 and not a.attisdropped
  ) c
  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%';

select is_empty($$select fn || ': ' || name from fn_columns where name in ('id', 'parent_id')$$,
                'no function of ai returns a bare id or parent_id');
select set_eq($$select fn from fn_columns where name = 'parent_checkpoint_id'$$,
              $$values ('ai.checkpoint_lineage(text,text,text,text,integer)'), ('ai.checkpoint_tree(text,text,integer,text)'),
                       ('ai.checkpoints_between(text,timestamp with time zone,timestamp with time zone,integer,text,text)'),
                       ('ai.get_checkpoint(text,text,text)'), ('ai.list_checkpoints(text,text,text,integer,jsonb,text,text)')$$,
              'the functions returning checkpoints call the parent parent_checkpoint_id');

select * from finish();
rollback;
