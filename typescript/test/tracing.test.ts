// The worker's OpenTelemetry spans (src/tracing.ts; docs/observability.md, "Traces"), read back
// through a minimal tracer provider written here against @opentelemetry/api's interfaces (no SDK
// is a dependency of the package): an enqueue inside a request's span stores its trace context,
// and the run of the fixture graph is one trace under that request: the attempt span, a span per
// node with the checkpoint it saved, and the email side effect under the node that sent it.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes, randomUUID } from "node:crypto";
import {
  ROOT_CONTEXT,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import type pg from "pg";
import { Client } from "../src/index.js";
import { GraphRuns } from "../src/langgraph.js";
import { pool } from "./db.js";

class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const run = (...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

/** W3C traceparent only (what an SDK's propagator writes first; the SDK is no dependency here). */
const w3c: TextMapPropagator = {
  inject(ctx, carrier, setter) {
    const span = trace.getSpanContext(ctx);
    if (span) setter.set(carrier, "traceparent", `00-${span.traceId}-${span.spanId}-0${span.traceFlags}`);
  },
  extract(ctx, carrier, getter) {
    const value = getter.get(carrier, "traceparent");
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/.exec(String(value ?? ""));
    if (!match) return ctx;
    return trace.setSpanContext(ctx, { traceId: match[1], spanId: match[2], traceFlags: Number(match[3]), isRemote: true });
  },
  fields: () => ["traceparent"],
};

class RecordedSpan implements Span {
  readonly context: SpanContext;
  readonly parentSpanId: string | undefined;
  attributes: Attributes;
  readonly links: Link[];
  readonly events: { name: string; attributes?: Attributes }[] = [];
  status: SpanStatus = { code: 0 };
  ended = false;
  constructor(
    readonly name: string,
    options: SpanOptions,
    parent: SpanContext | undefined,
    readonly kind = options.kind,
  ) {
    this.context = { traceId: parent?.traceId ?? randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex"), traceFlags: 1 };
    this.parentSpanId = parent?.spanId;
    this.attributes = { ...(options.attributes ?? {}) };
    this.links = options.links ?? [];
  }
  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(key: string, value: unknown): this {
    this.attributes[key] = value as Attributes[string];
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent(name: string, attributes?: Attributes): this {
    this.events.push({ name, attributes });
    return this;
  }
  addLink(link: Link): this {
    this.links.push(link);
    return this;
  }
  addLinks(links: Link[]): this {
    this.links.push(...links);
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(name: string): this {
    return Object.assign(this, { name });
  }
  end(): void {
    this.ended = true;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(): void {}
}

const spans: RecordedSpan[] = [];
const tracer: Tracer = {
  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const span = new RecordedSpan(name, options, trace.getSpanContext(ctx));
    spans.push(span);
    return span;
  },
  startActiveSpan(name: string, ...rest: unknown[]): never {
    const fn = rest[rest.length - 1] as (span: Span) => never;
    const span = this.startSpan(name);
    return context.with(trace.setSpan(context.active(), span), () => fn(span));
  },
} as Tracer;
const provider: TracerProvider = { getTracer: () => tracer };

let servicePool: pg.Pool;
let service: Client;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncContextManager());
  propagation.setGlobalPropagator(w3c);
  trace.setGlobalTracerProvider(provider);
  servicePool = pool("app_service");
  service = new Client(servicePool);
});
afterAll(async () => {
  trace.disable();
  propagation.disable();
  context.disable();
  await servicePool.end();
});

describe("traces", () => {
  it("puts the run of a graph in the trace of the request that enqueued it", async () => {
    const { graph } = await import("./fixtures/graph.mjs");
    const queue = `ts-trace-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-trace-${randomUUID()}`;
    const runs = new GraphRuns(service, graph, { queue });
    const request = tracer.startSpan("POST /research") as RecordedSpan;
    const job = await context.with(trace.setSpan(context.active(), request), () => runs.start(threadId, { steps: [] }));
    request.end();
    expect(job.headers?.traceparent).toBe(`00-${request.context.traceId}-${request.context.spanId}-01`);
    expect((await service.enqueueJob(threadId, {}, { queue: `${queue}-plain` })).headers ?? null).toBeNull();

    const stats = await runs.worker(service, { pollMs: 20 }).run({ drain: true });
    expect(stats.completed).toBe(1);

    const traced = spans.filter((s) => s.context.traceId === request.context.traceId && s !== request);
    const [attempt] = traced.filter((s) => s.name === `process ${queue}`);
    expect(attempt.parentSpanId).toBe(request.context.spanId);
    expect(attempt.links.map((l) => l.context.spanId)).toEqual([request.context.spanId]);
    expect(attempt.attributes).toMatchObject({
      "messaging.system": "agent_state",
      "messaging.destination.name": queue,
      "agent_state.thread_id": threadId,
      "agent_state.job_id": job.job_id,
      "agent_state.attempt": 1,
      "agent_state.outcome": "completed",
    });
    const steps = traced.filter((s) => s.parentSpanId === attempt.context.spanId);
    expect(steps.map((s) => s.name)).toEqual(["step research", "step slow", "step publish"]);
    for (const step of steps) expect(step.attributes["agent_state.checkpoint_id"]).toMatch(/\S/);
    const [email] = traced.filter((s) => s.name === "side_effect email");
    expect(email.parentSpanId).toBe(steps[0].context.spanId);
    expect(email.attributes["agent_state.side_effect.outcome"]).toBe("executed");
    expect(traced.every((s) => s.ended)).toBe(true);
  });
});
