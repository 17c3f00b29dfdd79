-- One archiver: batches of 100 sessions until none is left, each batch its own transaction.
call ai.archive_all_sessions('30 days', 100);
