/**
 * `AgentStateSaver`: a LangGraph.js checkpointer backed by the `ai` schema, and durable graph
 * runs (`GraphRuns`) on top of the queue.
 *
 * Every saver method is one call of a SQL function (`ai.put_checkpoint`, `ai.put_writes`,
 * `ai.get_checkpoint`, `ai.list_checkpoints`, `ai.delete_thread`); the only work done here is
 * LangGraph's own serialization (`this.serde`). What is stored where, as the Python saver does:
 *
 * - the checkpoint without its channel values and versions -> `ai.checkpoints.checkpoint` (serde bytes);
 * - `channel_versions` -> `ai.checkpoints.channel_versions` (jsonb; the database joins on it);
 * - each channel value a step changed (`newVersions`) -> `ai.checkpoint_blobs`, once per (channel, version);
 * - `putWrites` -> `ai.checkpoint_writes`.
 *
 * Fencing: when `config.configurable` carries `job_id` and `fencing_token` (a queue worker's
 * claim), every checkpoint and write goes through the queue's fencing check, so a worker that lost
 * its lease writes nothing (`LeaseLost`).
 *
 * Across languages (docs/typescript.md): versions use the Python saver's format (a zero-padded
 * counter and a random part), so either language continues the other's version numbers. The
 * bytes are in the writer's serializer: LangGraph.js writes type `json`, which Python's
 * JsonPlusSerializer reads (LangChain messages included); Python writes `msgpack`, which the
 * default serializer here (AgentStateSerializer, serde.ts) reads as Python's own msgpack-to-JSON
 * conversion does (LangChain messages become LangGraph.js's).
 */
import pg from "pg";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Command } from "@langchain/langgraph";
import { Client, idempotencyKey, poolFromConnString, type Source } from "./client.js";
import { AgentStateSerializer } from "./serde.js";
import { Worker, type JobContext, type WorkerOptions } from "./worker.js";
import type { ChannelValue, CheckpointRow, Job, PendingWriteRow } from "./models.js";

export interface AgentStateSaverOptions {
  serde?: SerializerProtocol;
  /** "async" commits each put with synchronous_commit off (faster; a server crash may lose the last steps). */
  durability?: "sync" | "async";
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function configurable(config: RunnableConfig): Record<string, unknown> {
  return (config.configurable ?? {}) as Record<string, unknown>;
}

/** A string argument, or null (the SQL function then raises InvalidArgument, AS002). */
function optionalString(value: unknown): string | null {
  return value === undefined || value === null ? null : String(value);
}

function optionalNumber(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  return Number(value);
}

export class AgentStateSaver extends BaseCheckpointSaver {
  readonly client: Client;
  readonly durability: "sync" | "async";
  private ownedPool: pg.Pool | null = null;

  constructor(source: Source | Client, options: AgentStateSaverOptions = {}) {
    super(options.serde ?? new AgentStateSerializer());
    this.client = source instanceof Client ? source : new Client(source);
    this.durability = options.durability ?? "sync";
    if (this.durability !== "sync" && this.durability !== "async") {
      throw new Error(`durability must be 'sync' or 'async', not ${String(this.durability)}`);
    }
  }

  /**
   * A saver over a pool of its own (`end()` closes it). A URL may name several hosts with
   * `target_session_attrs=read-write`: each new connection goes to the first writable one, so
   * after a failover the saver follows the new primary (`poolFromConnString`).
   */
  static fromConnString(connectionString: string, options: AgentStateSaverOptions & { max?: number } = {}): AgentStateSaver {
    const pool = poolFromConnString(connectionString, { max: options.max ?? 10 });
    const saver = new AgentStateSaver(pool, options);
    saver.ownedPool = pool;
    return saver;
  }

  /** Checks that schema `ai` is deployed (the schema is installed by sqitch or sql/ai.sql, not here). */
  async setup(): Promise<void> {
    const rows = await this.client.query<{ ok: boolean }>(
      "select exists (select 1 from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace" +
        " where n.nspname = 'ai' and p.proname = 'put_checkpoint') as ok",
    );
    if (!rows[0]?.ok) {
      throw new Error(
        "schema ai is not deployed in this database: run `sqitch deploy` or `psql -f sql/ai.sql` as the schema owner (docs/upgrading.md)",
      );
    }
  }

  async end(): Promise<void> {
    if (this.ownedPool) await this.ownedPool.end();
    this.ownedPool = null;
  }

  /**
   * The Python savers' (and Python PostgresSaver's) format: a zero-padded counter and a random
   * part, as a string, so either language continues the other's versions and two branches of a
   * thread never give different values the same (channel, version). Typed `number` as
   * LangGraph.js's default saver type is (`compile({ checkpointer })` takes that type); LangGraph.js
   * compares string versions as strings, which this format sorts right.
   */
  override getNextVersion(current: number | undefined): number {
    const value = current as number | string | undefined;
    let n = 0;
    if (typeof value === "number") n = value;
    else if (typeof value === "string") n = Number.parseInt(value.split(".")[0] ?? "0", 10);
    return `${String(n + 1).padStart(32, "0")}.${Math.random().toFixed(16).padStart(16, "0")}` as unknown as number;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const c = configurable(config);
    const threadId = optionalString(c.thread_id);
    if (threadId === null) return undefined; // no thread: nothing to find (as PostgresSaver answers)
    const row = await this.client.getCheckpoint(
      threadId,
      (c.checkpoint_ns as string | undefined) ?? "",
      (c.checkpoint_id as string | undefined) ?? null,
    );
    return row === null ? undefined : this.toTuple(row);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const c = configurable(config);
    const { limit, before, filter } = options;
    const threadId = c.thread_id === undefined || c.thread_id === null ? null : String(c.thread_id);
    if (threadId !== null && c.checkpoint_id) {
      const found = await this.getTuple(config);
      if (found && Object.entries(filter ?? {}).every(([k, v]) => (found.metadata as Record<string, unknown>)?.[k] === v)) {
        if (limit === undefined || limit > 0) yield found;
      }
      return;
    }
    if (limit !== undefined && limit <= 0) return;
    // ai.list_checkpoints returns one bounded page: read on from the last row until a short page
    const page = 500;
    let listed = 0;
    let cursor: { before: string | null; beforeThreadId: string | null; beforeCheckpointNs: string | null } = {
      before: (before?.configurable?.checkpoint_id as string | undefined) ?? null,
      beforeThreadId: null,
      beforeCheckpointNs: null,
    };
    for (;;) {
      const size = limit === undefined ? page : Math.min(limit - listed, page);
      const rows = await this.client.listCheckpoints(threadId, {
        checkpointNs: (c.checkpoint_ns as string | undefined) ?? null,
        ...cursor,
        maxRows: size,
        metadataFilter: filter && Object.keys(filter).length > 0 ? filter : undefined,
      });
      for (const row of rows) yield await this.toTuple(row);
      listed += rows.length;
      if (rows.length < size || (limit !== undefined && listed >= limit)) return;
      const last = rows[rows.length - 1];
      cursor = { before: last.checkpoint_id, beforeThreadId: last.thread_id, beforeCheckpointNs: last.checkpoint_ns };
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const c = configurable(config);
    const threadId = optionalString(c.thread_id) as string;
    const checkpointNs = (c.checkpoint_ns as string | undefined) ?? "";
    const { channel_values: channelValues, channel_versions: channelVersions, ...rest } = checkpoint;
    const [type, data] = await this.serde.dumpsTyped({ ...rest, channel_values: {} });
    const values: ChannelValue[] = [];
    for (const [channel, version] of Object.entries(newVersions)) {
      if (!(channel in channelValues)) continue;
      const [valueType, blob] = await this.serde.dumpsTyped((channelValues as Record<string, unknown>)[channel]);
      values.push({ channel, version: String(version), type: valueType, blob });
    }
    const jobId = optionalNumber(c.job_id);
    await this.client.putCheckpoint({
      threadId,
      checkpointNs,
      checkpointId: checkpoint.id,
      parentCheckpointId: (c.checkpoint_id as string | undefined) ?? null,
      type,
      checkpoint: data,
      metadata: await this.dumpMetadata(metadata, jobId),
      channelVersions,
      values,
      jobId,
      fencingToken: optionalNumber(c.fencing_token),
      durability: this.durability,
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const c = configurable(config);
    const rows: PendingWriteRow[] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      const [type, blob] = await this.serde.dumpsTyped(value);
      rows.push({ idx: WRITES_IDX_MAP[channel] ?? i, channel, type, blob });
    }
    await this.client.putWrites(
      optionalString(c.thread_id) as string,
      (c.checkpoint_ns as string | undefined) ?? "",
      optionalString(c.checkpoint_id) as string,
      taskId,
      rows,
      { taskPath, jobId: optionalNumber(c.job_id), fencingToken: optionalNumber(c.fencing_token) },
    );
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.client.deleteThread(String(threadId));
  }

  /**
   * Metadata as JSON (the serializer's JSON, NUL characters removed, as PostgresSaver stores it),
   * with the claim's job id when the run is fenced: the resume rule of graph runs reads it (the
   * Python LangGraph copies `configurable` into the metadata the same way).
   */
  private async dumpMetadata(metadata: CheckpointMetadata, jobId: number | null): Promise<Record<string, unknown>> {
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    const json = JSON.parse(decoder.decode(bytes).replace(/\\u0000|\0/g, "")) as Record<string, unknown>;
    if (jobId !== null && json.job_id === undefined) json.job_id = jobId;
    return json;
  }

  /**
   * A checkpoint written before format v4 kept its pending sends as TASKS writes of its parent;
   * PostgresSaver's conversion: those writes, in order, become its TASKS channel at its newest version.
   */
  private async migratePendingSends(checkpoint: Checkpoint, row: CheckpointRow): Promise<void> {
    const parent = await this.client.getCheckpoint(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id);
    const sends: unknown[] = [];
    for (const [i, channel] of (parent?.write_channels ?? []).entries()) {
      if (channel === TASKS) sends.push(await this.serde.loadsTyped(parent!.write_types![i]!, parent!.write_blobs![i]!));
    }
    if (sends.length === 0) return;
    const versions = Object.values(checkpoint.channel_versions);
    (checkpoint.channel_values as Record<string, unknown>)[TASKS] = sends;
    (checkpoint.channel_versions as Record<string, string | number>)[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  private async toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const loads = (type: string, blob: Uint8Array) => this.serde.loadsTyped(type, blob);
    const checkpoint = (await loads(row.type, row.checkpoint)) as Checkpoint;
    const values: Record<string, unknown> = { ...(checkpoint.channel_values ?? {}) };
    const channels = row.blob_channels ?? [];
    for (const [i, channel] of channels.entries()) {
      const blob = row.blobs?.[i];
      const type = row.blob_types?.[i];
      if (blob === null || blob === undefined || type === undefined || type === "empty") continue;
      values[channel] = await loads(type, blob);
    }
    checkpoint.channel_values = values;
    checkpoint.channel_versions = { ...(row.channel_versions ?? {}) };
    checkpoint.versions_seen = checkpoint.versions_seen ?? {};
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const [i, taskId] of (row.write_task_ids ?? []).entries()) {
      pendingWrites.push([taskId, row.write_channels![i]!, await loads(row.write_types![i]!, row.write_blobs![i]!)]);
    }
    if ((checkpoint.v ?? 4) < 4 && row.parent_checkpoint_id) await this.migratePendingSends(checkpoint, row);
    const [, metaBytes] = await this.serde.dumpsTyped(row.metadata);
    const metadata = (await this.serde.loadsTyped("json", metaBytes)) as CheckpointMetadata;
    const base = { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns };
    return {
      config: { configurable: { ...base, checkpoint_id: row.checkpoint_id } },
      checkpoint,
      metadata,
      parentConfig: row.parent_checkpoint_id
        ? { configurable: { ...base, checkpoint_id: row.parent_checkpoint_id } }
        : undefined,
      pendingWrites,
    };
  }
}


// ----- durable graph runs (python/agent_state/graph_runs.py, docs/graph-runs.md) ------------------

/** The queue graph runs go to unless told otherwise (the Python default too). */
export const DEFAULT_QUEUE = "graph-runs";
/** The job payload key holding the run's input (as Python's GraphRuns writes it). */
export const INPUT_KEY = "graph_input";
/** Where the claim's context travels in `configurable` (a leading `__` keeps it out of the metadata). */
export const CONTEXT_KEY = "__agent_state_job_context";

/** The JobContext of the graph run a node belongs to, from the config LangGraph.js passes to the node. */
export function jobContext(config: RunnableConfig | undefined): JobContext {
  const found = (config?.configurable as Record<string, unknown> | undefined)?.[CONTEXT_KEY];
  if (found === undefined) throw new Error("jobContext(): not inside a durable graph run (GraphRuns.handler)");
  return found as JobContext;
}

/** JSON as Python's `json.dumps(value, sort_keys=True)` writes it, so a run's dedup key is the same in both languages. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (typeof value === "object") {
    const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    if (plain === null || typeof plain !== "object" || Array.isArray(plain)) return pythonJson(plain);
    const keys = Object.keys(plain).sort();
    return `{${keys.map((k) => `${pythonJson(k)}: ${pythonJson(plain[k])}`).join(", ")}}`;
  }
  return JSON.stringify(String(value));
}

/** The key a run is deduplicated on without a dedupKey: the thread and the input, hashed (as Python's run_dedup_key). */
export function runDedupKey(threadId: string, input: unknown): string {
  return `graph-run:${idempotencyKey(threadId, pythonJson(input ?? null))}`;
}

/** How a claim invokes the graph: its input, from the thread's latest checkpoint and the job (the resume rule). */
export interface RunPlan {
  mode: "start" | "resume" | "human";
  input: unknown;
  checkpointId: string | null;
}

/** The part of a compiled LangGraph.js graph that graph runs use. */
export interface RunnableGraph {
  checkpointer?: unknown;
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
  /** LangGraph.js's stream: used instead of invoke when the attempt's span records (a span per step). */
  stream?(input: unknown, config?: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState(config: RunnableConfig): Promise<{
    values: unknown;
    config: RunnableConfig;
    tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<{ value?: unknown; id?: string }> }>;
  }>;
}

export interface GraphRunsOptions {
  queue?: string;
  /** "sync" (default): every step is saved before the next starts, so a resumed run never repeats a finished node. */
  durability?: "sync" | "async" | "exit";
  maxAttempts?: number;
  /** The final state as the job's JSON result (default: the state values as JSON). */
  result?: (values: unknown) => unknown;
  /** Merged into every invocation's config (e.g. { recursionLimit: 50 }). */
  config?: Record<string, unknown>;
}

function plan(job: Job, latest: CheckpointTuple | undefined): RunPlan {
  const ours = latest !== undefined && Number((latest.metadata as Record<string, unknown> | undefined)?.job_id) === job.job_id;
  const checkpointId = latest ? String(latest.config.configurable?.checkpoint_id) : null;
  const payload = (job.payload ?? {}) as Record<string, unknown>;
  const human = payload.human as { checkpoint_id?: string; decision?: unknown } | undefined;
  if (ours && human && typeof human === "object" && human.checkpoint_id === checkpointId) {
    return { mode: "human", input: new Command({ resume: human.decision }), checkpointId };
  }
  if (ours) return { mode: "resume", input: null, checkpointId };
  return { mode: "start", input: payload[INPUT_KEY] ?? null, checkpointId: null };
}

/**
 * Durable runs of a compiled LangGraph.js graph through the queue, as Python's `GraphRuns`:
 * `start()` enqueues a run (deduplicated), `handler` is the Worker handler that runs or resumes
 * it with the fenced AgentStateSaver, `worker()` builds the Worker. The job payload, the resume
 * rule (the latest checkpoint carries this job's id: continue from it; a person's decision:
 * `Command({ resume })`), the interrupt action and the result are the Python ones, so a run
 * started in one language is run by a worker of the other (docs/typescript.md says what crosses).
 */
export class GraphRuns {
  readonly client: Client;
  readonly graph: RunnableGraph;
  readonly queue: string;
  readonly durability: "sync" | "async" | "exit";
  readonly maxAttempts: number;
  private readonly result: (values: unknown) => unknown;
  private readonly config: Record<string, unknown>;
  private readonly bound = new Map<unknown, RunnableGraph>();

  constructor(client: Client, graph: RunnableGraph, options: GraphRunsOptions = {}) {
    this.client = client;
    this.graph = graph;
    this.queue = options.queue ?? DEFAULT_QUEUE;
    this.durability = options.durability ?? "sync";
    this.maxAttempts = options.maxAttempts ?? 5;
    this.result = options.result ?? ((values) => JSON.parse(JSON.stringify(values ?? null)));
    this.config = options.config ?? {};
  }

  /** Enqueues a run for the thread (creating its session); starting the same run again returns the first job. */
  async start(
    threadId: string,
    input: unknown = null,
    options: { dedupKey?: string; priority?: number; maxAttempts?: number; sessionConfig?: Record<string, unknown> } = {},
  ): Promise<Job> {
    await this.client.createSession(threadId, options.sessionConfig ?? {});
    return this.client.enqueueJob(threadId, { [INPUT_KEY]: JSON.parse(JSON.stringify(input ?? null)) }, {
      queue: this.queue,
      priority: options.priority ?? 0,
      maxAttempts: options.maxAttempts ?? this.maxAttempts,
      idempotencyKey: options.dedupKey ?? runDedupKey(threadId, input),
    });
  }

  /** The graph with an AgentStateSaver over `client` (unless it was compiled with one). */
  graphFor(client: Client): RunnableGraph {
    if (this.graph.checkpointer instanceof AgentStateSaver) return this.graph;
    let bound = this.bound.get(client.source);
    if (bound === undefined) {
      bound = Object.assign(Object.create(Object.getPrototypeOf(this.graph) as object) as RunnableGraph, this.graph, {
        checkpointer: new AgentStateSaver(client),
      });
      this.bound.set(client.source, bound);
    }
    return bound;
  }

  /** What a claim of `job` would do now (the resume rule). */
  async plan(job: Job, graph: RunnableGraph = this.graphFor(this.client)): Promise<RunPlan> {
    const saver = graph.checkpointer as AgentStateSaver;
    return plan(job, await saver.getTuple(head(job.thread_id)));
  }

  /** The Worker handler: runs (or resumes) the graph for the claimed job. */
  readonly handler = async (job: Job, ctx: JobContext): Promise<unknown> => {
    const graph = this.graphFor(ctx.client);
    const todo = await this.plan(job, graph);
    const extra = { ...this.config };
    const configurable = {
      ...((extra.configurable as Record<string, unknown> | undefined) ?? {}),
      thread_id: job.thread_id,
      job_id: job.job_id,
      fencing_token: job.fencing_token,
      [CONTEXT_KEY]: ctx,
    };
    const options = { ...extra, configurable, durability: this.durability, signal: ctx.signal };
    const trace = ctx.trace;
    if (trace?.recording && typeof graph.stream === "function") {
      trace.stepsFrom(todo.checkpointId); // a span per step (src/tracing.ts)
      try {
        for await (const event of await graph.stream(todo.input, { ...options, streamMode: ["tasks", "checkpoints"] })) {
          trace.seen(event);
        }
      } catch (error) {
        trace.stepsEnded(error);
        throw error;
      }
      trace.stepsEnded();
    } else {
      await graph.invoke(todo.input, options);
    }
    ctx.check();
    const state = await graph.getState(head(job.thread_id));
    const interrupts = state.tasks.flatMap((t) => t.interrupts ?? []);
    if (interrupts.length > 0) {
      await ctx.requestHuman(String(state.config.configurable?.checkpoint_id), {
        interrupt: interrupts.map((i) => JSON.parse(JSON.stringify(i.value ?? null))),
        interrupt_ids: interrupts.map((i) => i.id ?? null),
      });
      return null;
    }
    return this.result(state.values);
  };

  /** A Worker running this graph's runs (its client's source: a pool, for concurrency > 1). */
  worker(client: Client = this.client, options: WorkerOptions = {}): Worker {
    return new Worker(client, this.handler, { queue: this.queue, ...options });
  }
}

function head(threadId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: "" } };
}

export { AgentStateSerializer } from "./serde.js";
export { AgentStateStore, BATCH_LIMIT, type MemoryIndexConfig } from "./store.js";
