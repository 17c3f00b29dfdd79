-- 64 fresh sessions of the tenant (bench_tenant), named by the prefix the script passes.
select ai.create_session(:'prefix' || i) from generate_series(1, 64) i;
