\ir ../fixtures/helpers.sql
begin;
select plan(3);
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset

set local role tenant_a;
select (ai.create_session('lsp-a')).thread_id as a \gset
-- three streams opened at one instant: the cursor's key breaks the tie
select (ai.open_stream('lsp-a', k)).stream_key from unnest(array['s1', 's2', 's3']) k;

select results_eq($$ select stream_key from ai.list_streams('lsp-a', max_rows => 2) $$, $$ values ('s1'::text), ('s2') $$,
                  'the first page');
select results_eq($$ select stream_key from ai.list_streams('lsp-a', after_stream_key => 's2') $$, $$ values ('s3'::text) $$,
                  'the next page after the last key');
select throws_ok($$ select * from ai.list_streams('lsp-a', after_stream_key => 'nope') $$, 'AS001', null, 'an unknown cursor');

select * from finish();
rollback;
