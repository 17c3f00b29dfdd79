/**
 * OpenTelemetry spans of the TypeScript worker, the ones the Python Worker emits
 * (python/agent_state/tracing.py; docs/observability.md, "Traces"): `process <queue>` per run
 * attempt (CONSUMER, a child of the enqueuer's trace context stored in the job's `headers`, and a
 * link to it; else a trace id derived from the job, so its attempts are one trace), the events
 * `agent_state.takeover` and `agent_state.retry`, `step <node>` per graph step with the checkpoint
 * it saved, and `side_effect <first key part>` per side effect (executed, cached, taken_over).
 *
 * `@opentelemetry/api` is an optional peer dependency, loaded once (the first `Worker.run()` or
 * enqueue); without it, or with AGENT_STATE_OTEL=off, nothing is emitted and nothing changes.
 * The spans go to the global tracer provider (`trace.setGlobalTracerProvider`, or the SDK's
 * `register()`); with none, they are the API's non-recording spans and graph runs use `invoke`.
 */
import { createHash } from "node:crypto";
import type * as OtelApi from "@opentelemetry/api";
import type { Job } from "./models.js";

type Api = typeof OtelApi;
type Span = OtelApi.Span;
type Context = OtelApi.Context;

/** The instrumentation scope and the `messaging.system` value. */
export const INSTRUMENTATION = "agent_state";

let loaded: Promise<Api | null> | null = null;

/** The API, or null when it is not installed or tracing is off (loaded once). */
export function loadTracing(): Promise<Api | null> {
  if (loaded === null) {
    const off = ["off", "0", "false", "no"].includes((process.env.AGENT_STATE_OTEL ?? "").trim().toLowerCase());
    loaded = off ? Promise.resolve(null) : import("@opentelemetry/api").then((api) => api, () => null);
  }
  return loaded;
}

/** @internal For the tests: load the API again (after AGENT_STATE_OTEL changed). */
export function resetTracing(): void {
  loaded = null;
}

/** The headers an enqueue stores: the active trace context (traceparent, tracestate) under the caller's. */
export async function injectHeaders(headers?: Record<string, string> | null): Promise<Record<string, string> | null> {
  const api = await loadTracing();
  const carrier: Record<string, string> = {};
  if (api !== null) api.propagation.inject(api.context.active(), carrier);
  Object.assign(carrier, headers ?? {});
  return Object.keys(carrier).length > 0 ? carrier : null;
}

interface AttemptLogEntry {
  attempt?: number;
  worker?: string | null;
  fencing_token?: number;
  claimed_at?: string | null;
  lease_expires_at?: string | null;
  outcome?: string;
  error?: string | null;
}

/** The span of one run attempt and what goes with it (a JobContext's `trace`). */
export class Attempt {
  readonly api: Api;
  readonly span: Span;
  /** The attempt span as the active context: the handler runs in it. */
  readonly context: Context;
  private readonly steps = new Map<string, Span>();
  private done: Span[] = [];
  private interrupted = new Set<Span>();
  private checkpointId: string | null = null;

  constructor(api: Api, job: Job, workerId: string) {
    this.api = api;
    const { parent, links } = jobContext(api, job);
    this.span = api.trace.getTracer(INSTRUMENTATION).startSpan(
      `process ${job.queue}`,
      {
        kind: api.SpanKind.CONSUMER,
        links,
        attributes: {
          "messaging.system": INSTRUMENTATION,
          "messaging.destination.name": job.queue,
          "messaging.operation": "process",
          "messaging.operation.type": "process",
          "messaging.message.id": String(job.job_id),
          "agent_state.thread_id": job.thread_id,
          "agent_state.job_id": job.job_id,
          "agent_state.attempt": job.attempts,
          "agent_state.fencing_token": job.fencing_token,
          "agent_state.queue": job.queue,
          "agent_state.worker_id": workerId,
        },
      },
      parent,
    );
    this.context = api.trace.setSpan(parent, this.span);
    const log = (job as Job & { attempt_log?: AttemptLogEntry[] | null }).attempt_log;
    const previous = Array.isArray(log) ? log[log.length - 1] : undefined;
    if (previous && previous.attempt === job.attempts - 1 && previous.outcome === "expired") {
      this.span.addEvent("agent_state.takeover", {
        "agent_state.previous.worker_id": String(previous.worker ?? ""),
        "agent_state.previous.fencing_token": Number(previous.fencing_token ?? 0),
        "agent_state.previous.claimed_at": String(previous.claimed_at ?? ""),
        "agent_state.previous.lease_expires_at": String(previous.lease_expires_at ?? ""),
      });
    } else if (previous && previous.attempt === job.attempts - 1 && previous.outcome === "failed") {
      this.span.addEvent("agent_state.retry", { "agent_state.previous.error": String(previous.error ?? "") });
    }
  }

  get recording(): boolean {
    return this.span.isRecording();
  }

  /** The attempt ended: completed, failed, paused, snoozed, timed_out (its deadline passed), released or lost. */
  end(outcome: string, error?: unknown): void {
    for (const step of this.steps.values()) step.end();
    this.steps.clear();
    this.span.setAttribute("agent_state.outcome", outcome);
    if (outcome === "lost") this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: "lease lost" });
    if (outcome === "timed_out") this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: "deadline exceeded" });
    if (outcome === "failed") {
      if (error instanceof Error) this.span.recordException(error);
      this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: String(error).slice(0, 500) });
    }
    this.span.end();
  }

  /** The span of one side effect: a child of the one running step, else of the attempt. */
  sideEffect(name: string, key: string, threadId: string, jobId: number): Span {
    const parent = this.steps.size === 1 ? this.api.trace.setSpan(this.context, [...this.steps.values()][0]) : this.context;
    return this.api.trace.getTracer(INSTRUMENTATION).startSpan(
      `side_effect ${name}`,
      { attributes: { "agent_state.idempotency_key": key, "agent_state.thread_id": threadId, "agent_state.job_id": jobId } },
      parent,
    );
  }

  /** The checkpoint a graph invocation continues from (the first step's parent). */
  stepsFrom(checkpointId: string | null): void {
    this.checkpointId = checkpointId;
  }

  /** One event of LangGraph.js's `tasks` and `checkpoints` stream modes (`[mode, chunk]`). */
  seen(event: unknown): void {
    if (!Array.isArray(event) || event.length < 2) return;
    const [mode, chunk] = event as [string, Record<string, unknown>];
    if (mode === "tasks" && chunk && typeof chunk === "object") {
      const id = String(chunk.id);
      const name = String(chunk.name);
      if ("input" in chunk) {
        const attributes: OtelApi.Attributes = { "langgraph.node": name, "langgraph.task_id": id };
        if (this.checkpointId !== null) attributes["langgraph.checkpoint_id_from"] = this.checkpointId;
        this.steps.set(id, this.api.trace.getTracer(INSTRUMENTATION).startSpan(`step ${name}`, { attributes }, this.context));
        return;
      }
      const span = this.steps.get(id);
      if (span === undefined) return;
      this.steps.delete(id);
      if (chunk.error) span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: String(chunk.error).slice(0, 500) });
      for (const interrupt of (chunk.interrupts as { id?: string }[] | undefined) ?? []) {
        span.addEvent("langgraph.interrupt", { "langgraph.interrupt_id": String(interrupt?.id ?? "") });
        this.interrupted.add(span);
      }
      this.done.push(span);
    } else if (mode === "checkpoints" && chunk && typeof chunk === "object") {
      const config = chunk.config as { configurable?: { checkpoint_id?: string } } | undefined;
      const step = (chunk.metadata as { step?: number } | undefined)?.step;
      this.checkpointId = String(config?.configurable?.checkpoint_id);
      for (const span of this.done) {
        span.setAttribute("agent_state.checkpoint_id", this.checkpointId);
        if (typeof step === "number") span.setAttribute("langgraph.step", step);
        span.end();
      }
      this.done = [];
    }
  }

  /** The invocation ended: a step still open ends (with the error that ended the run). */
  stepsEnded(error?: unknown): void {
    for (const span of [...this.done, ...this.steps.values()]) {
      if (this.interrupted.has(span) && this.checkpointId !== null) span.setAttribute("agent_state.checkpoint_id", this.checkpointId);
      if (error !== undefined) span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: String(error).slice(0, 500) });
      span.end();
    }
    this.done = [];
    this.steps.clear();
    this.interrupted = new Set();
  }
}

/** The attempt span's parent and links: the enqueuer's context, else one derived from the job. */
function jobContext(api: Api, job: Job): { parent: Context; links: OtelApi.Link[] } {
  const headers = (job as Job & { headers?: Record<string, string> | null }).headers;
  if (headers && typeof headers === "object") {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, headers);
    const found = api.trace.getSpanContext(parent);
    if (found && api.trace.isSpanContextValid(found)) return { parent, links: [{ context: found }] };
  }
  // the same bytes as Python's (agent_state.tracing): a job's attempts are one trace in either language
  const digest = createHash("sha256").update(`agent_state job\0${job.owner}\0${job.thread_id}\0${job.job_id}`).digest("hex");
  const derived = {
    traceId: digest.slice(0, 32),
    spanId: digest.slice(32, 48),
    isRemote: true,
    traceFlags: api.TraceFlags.SAMPLED,
  };
  return { parent: api.trace.setSpanContext(api.ROOT_CONTEXT, derived), links: [] };
}
