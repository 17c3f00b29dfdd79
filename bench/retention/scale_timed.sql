-- The timed part of bench/retention/scale.sql, as the worker: archive the :k sessions (batches of
-- 10, each its own transaction), then restore each (a session not archived stops it: ON_ERROR_STOP).
-- Prints the milliseconds per session of each phase.
select extract(epoch from clock_timestamp()) as t0 \gset
call ai.archive_all_sessions('300 days', 10);
select extract(epoch from clock_timestamp()) as t1 \gset
select count(ai.restore_session('scale-' || i)) from generate_series(1, :k) i \g /dev/null
select extract(epoch from clock_timestamp()) as t2 \gset
select round(((:t1 - :t0) * 1000 / :k)::numeric, 2) as archive_ms, round(((:t2 - :t1) * 1000 / :k)::numeric, 2) as restore_ms \gset
\echo :archive_ms :restore_ms

