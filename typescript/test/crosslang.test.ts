// Across languages on one database: a run started from Python (GraphRuns.start) is run by the
// TypeScript worker, and Python reads back its messages, side effect and checkpoints (the
// Python AgentStateSaver reading what LangGraph.js wrote); a run started from TypeScript is run by
// a Python graph_worker, and TypeScript reads back the same. The Python side is
// tests/python/crosslang_peer.py, run with the project's .venv python (AGENT_STATE_VPY).
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import type pg from "pg";
import { Client, idempotencyKey } from "../src/index.js";
import { AgentStateSaver, GraphRuns } from "../src/langgraph.js";
import { TS_DB, pool } from "./db.js";

const run = promisify(execFile);
const root = process.env.AGENT_STATE_ROOT ?? path.resolve(process.cwd(), "..");
const vpy = process.env.AGENT_STATE_VPY ?? path.join(root, ".venv", "bin", "python");
const peer = path.join(root, "tests", "python", "crosslang_peer.py");

function dsn(user: string): string {
  return `host=${process.env.PGHOST} port=${process.env.PGPORT} dbname=${TS_DB} user=${user}`;
}

async function python(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(vpy, [peer, ...args], { timeout: 120_000 });
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

let tenantPool: pg.Pool;
let servicePool: pg.Pool;
let tenant: Client;
let service: Client;

beforeAll(() => {
  tenantPool = pool("tenant_a");
  servicePool = pool("app_service");
  tenant = new Client(tenantPool);
  service = new Client(servicePool);
});
afterAll(async () => {
  await Promise.all([tenantPool.end(), servicePool.end()]);
});

describe("across languages", () => {
  it("Python enqueues, the TypeScript worker runs the LangGraph.js graph, Python reads it all back", async () => {
    const { graph } = await import("./fixtures/graph.mjs");
    const threadId = `py-to-ts-${randomUUID()}`;
    const queue = `py-to-ts-${randomUUID().slice(0, 8)}`;
    const { job_id: jobId } = (await python("enqueue", dsn("tenant_a"), threadId, queue)) as { job_id: number };
    // the job carries what Python's GraphRuns writes, and the same dedup key TypeScript computes
    expect((await tenant.getJob(jobId)).idempotency_key).toBe(
      (await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] })).idempotency_key,
    );
    const stats = await new GraphRuns(service, graph, { queue }).worker(service, { pollMs: 20 }).run({ drain: true });
    expect(stats.completed).toBe(1);

    const seen = await python("read", dsn("tenant_a"), threadId, String(jobId));
    expect(seen.status).toBe("COMPLETED");
    const steps = seen.steps as string[];
    expect(steps.slice(1)).toEqual(["slow done", "published"]);
    expect(seen.result).toEqual({ steps });
    expect(seen.messages).toEqual([{ text: "emailed alice" }]);
    expect(seen.side_effect).toMatchObject({ status: "done", attempt: 1 });
    expect(steps[0]).toBe(`emailed alice (${(seen.side_effect as { result: { sent: string } }).result.sent})`);
    expect(seen.metadata_job_id).toBe(jobId);
    expect(seen.checkpoints).toBeGreaterThanOrEqual(4);
  });

  it("LangChain messages a LangGraph.js graph checkpoints are LangChain messages to the Python saver", async () => {
    const { END, MessagesAnnotation, START, StateGraph } = await import("@langchain/langgraph");
    const { AIMessage, HumanMessage } = await import("@langchain/core/messages");
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("echo", async () => ({ messages: [new AIMessage("hello from TypeScript")] }))
      .addEdge(START, "echo")
      .addEdge("echo", END)
      .compile({ checkpointer: new AgentStateSaver(tenant) });
    const threadId = `ts-messages-${randomUUID()}`;
    await graph.invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: threadId } });
    const { stdout } = await run(vpy, [peer, "messages", dsn("tenant_a"), threadId], { timeout: 120_000 });
    expect(JSON.parse(stdout.trim())).toEqual([
      ["HumanMessage", "hi"],
      ["AIMessage", "hello from TypeScript"],
    ]);
  });

  it("TypeScript enqueues, a Python graph_worker runs its graph, TypeScript reads it all back", async () => {
    const { graph } = await import("./fixtures/graph.mjs");
    const threadId = `ts-to-py-${randomUUID()}`;
    const queue = `ts-to-py-${randomUUID().slice(0, 8)}`;
    const job = await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] });
    const stats = await python("worker", dsn("app_service"), queue);
    expect(stats.completed).toBe(1);

    const done = await tenant.getJob(job.job_id);
    expect(done.status).toBe("COMPLETED");
    const steps = (done.result as { steps: string[] }).steps;
    expect(steps[1]).toBe("published by python");
    expect((await tenant.getMessages(threadId)).map((m) => m.content)).toEqual([
      { text: "emailed alice", from: "python" },
    ]);
    // the same key in both languages: the ledger row Python wrote is found from TypeScript
    const effect = await tenant.getSideEffect(threadId, idempotencyKey("email", "alice", "started"));
    expect(effect.status).toBe("done");
    expect(steps[0]).toBe(`emailed alice (${(effect.result as { sent: string }).sent})`);
    // Python's checkpoints: msgpack bytes, which AgentStateSaver's serializer reads
    const row = (await tenant.getCheckpoint(threadId))!;
    expect(row.type).toBe("msgpack");
    expect(row.metadata.job_id).toBe(job.job_id);
    const saver = new AgentStateSaver(tenant);
    const found = (await saver.getTuple({ configurable: { thread_id: threadId } }))!;
    expect(found.checkpoint.channel_values).toMatchObject({ steps });
    expect(found.metadata).toMatchObject({ job_id: job.job_id });
    const history = [];
    for await (const t of saver.list({ configurable: { thread_id: threadId } })) history.push(t);
    expect(history.length).toBeGreaterThanOrEqual(3);
  });

  it("LangChain messages a Python graph checkpoints are LangGraph.js messages to the TypeScript saver", async () => {
    const { AIMessage, HumanMessage } = await import("@langchain/core/messages");
    const threadId = `py-messages-${randomUUID()}`;
    await run(vpy, [peer, "py-messages", dsn("tenant_a"), threadId], { timeout: 120_000 });
    const found = (await new AgentStateSaver(tenant).getTuple({ configurable: { thread_id: threadId } }))!;
    const messages = found.checkpoint.channel_values.messages as unknown[];
    expect(messages.map((m) => m instanceof HumanMessage || m instanceof AIMessage)).toEqual([true, true]);
    expect(messages.map((m) => (m as { content: unknown }).content)).toEqual(["hi", "hello from Python"]);
    expect(messages[0]).toBeInstanceOf(HumanMessage);
  });
});
