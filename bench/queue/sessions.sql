-- The queue bench's 10,000 sessions, created by the worker (bench_worker, ai_service).
select count(ai.create_session('bq-' || i)) from generate_series(0, 9999) i;
