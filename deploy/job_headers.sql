-- Deploy agent-state:job_headers to pg
-- requires: queue
-- requires: retention
--
-- ai.agent_jobs.headers: what the code that enqueued a job hands to whoever runs it, as a JSON
-- object of string values. Today the W3C trace context of the enqueuer (`traceparent`,
-- `tracestate`: https://www.w3.org/TR/trace-context/), which the Python and TypeScript clients
-- fill from the current OpenTelemetry context when they enqueue, and which the workers' run spans
-- take as their parent and link (docs/observability.md, "Traces"); open to other headers later.
-- NULL: none (a job enqueued without tracing, or by SQL). ai.enqueue_job and ai.enqueue_jobs
-- check it (an object, at most 8 KiB: AS002); no CHECK here, so that the column costs a job
-- nothing but its bytes. A nullable column without a default: no table rewrite.
--
-- The archive copies get it too: ai.agent_jobs_archive (ai.archive_jobs names its columns) and
-- ai_archive's twins of both (the retention functions copy by column name).
begin;

alter table ai.agent_jobs add column headers jsonb;
comment on column ai.agent_jobs.headers is
  'What the enqueuer hands to the run: a JSON object of strings, e.g. the W3C traceparent and tracestate of the code that enqueued the job. NULL: none.';
alter table ai.agent_jobs_archive add column headers jsonb;
alter table ai_archive.agent_jobs add column headers jsonb;
alter table ai_archive.agent_jobs_archive add column headers jsonb;

commit;
