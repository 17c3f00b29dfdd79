// The TypeScript worker and graph runs against the real database: a run completes, a run whose
// worker process is killed (SIGKILL) in the middle of a node is resumed by the next claim from
// the last checkpoint (the node before it does not run again, its side effect fires once), a
// graceful stop releases the job in flight, a handler's throw fails the job, and a lost lease
// stops a handler's writes.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { Client, LeaseLost, Worker, idempotencyKey } from "../src/index.js";
import { GraphRuns, runDedupKey, pythonJson } from "../src/langgraph.js";
import { TS_DB, pool, waitFor } from "./db.js";

const here = path.dirname(fileURLToPath(import.meta.url));
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

function workerProcess(queue: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [path.join(here, "fixtures", "graph_worker.mjs")], {
    env: { ...process.env, PGUSER: "app_service", PGDATABASE: TS_DB, QUEUE: queue, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, out })));
}

async function nodeEvents(threadId: string): Promise<{ node: string; attempt: number }[]> {
  const events = await tenant.getEvents(threadId, { kinds: ["node"] });
  return events.map((e) => e.payload as { node: string; attempt: number });
}

describe("graph runs", () => {
  it("runs a LangGraph.js graph as a durable job to completion", async () => {
    const { graph } = await import("./fixtures/graph.mjs");
    const queue = `ts-runs-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-run-${randomUUID()}`;
    const job = await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] });
    const stats = await new GraphRuns(service, graph, { queue }).worker(service, { pollMs: 20 }).run({ drain: true });
    expect(stats.completed).toBe(1);
    const done = await tenant.getJob(job.job_id);
    expect(done.status).toBe("COMPLETED");
    const steps = (done.result as { steps: string[] }).steps;
    expect(steps.slice(1)).toEqual(["slow done", "published"]);
    expect(steps[0]).toMatch(/^emailed alice \(/);
    expect((await tenant.getMessages(threadId)).map((m) => m.content)).toEqual([{ text: "emailed alice" }]);
    const effect = await tenant.getSideEffect(threadId, idempotencyKey("email", "alice", "started"));
    expect(effect.status).toBe("done");
  });

  it("resumes a run whose worker was killed mid-node from the last checkpoint, without repeating a finished node", async () => {
    const queue = `ts-crash-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-crash-${randomUUID()}`;
    const { graph } = await import("./fixtures/graph.mjs");
    const job = await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] });
    const first = workerProcess(queue, { HANG_ON_FIRST_ATTEMPT: "1", LEASE_SECONDS: "2" });
    const firstExit = exited(first);
    await waitFor(async () => ((await nodeEvents(threadId)).some((e) => e.node === "slow") ? true : undefined), 30_000, "the slow node");
    first.kill("SIGKILL");
    expect((await firstExit).signal).toBe("SIGKILL");
    expect((await tenant.getJob(job.job_id)).status).toBe("IN_PROGRESS"); // the dead worker's lease still runs

    const second = workerProcess(queue, { HANG_ON_FIRST_ATTEMPT: "1", LEASE_SECONDS: "2" });
    const secondExit = exited(second);
    const done = await waitFor(async () => {
      const j = await tenant.getJob(job.job_id);
      return j.status === "COMPLETED" ? j : undefined;
    }, 60_000, "the resumed run");
    second.kill("SIGTERM");
    expect((await secondExit).code).toBe(0);

    expect(done.attempts).toBe(2);
    expect(await nodeEvents(threadId)).toEqual([
      { node: "research", attempt: 1 },
      { node: "slow", attempt: 1 },
      { node: "slow", attempt: 2 },
    ]);
    const effect = await tenant.getSideEffect(threadId, idempotencyKey("email", "alice", "started"));
    expect(effect.attempt).toBe(1);
    expect((done.result as { steps: string[] }).steps.slice(1)).toEqual(["slow done", "published"]);
    expect((await tenant.getMessages(threadId)).length).toBe(1);
  });

  it("takes a killed worker's run over within 2 s, whatever the lease, through its liveness hold", async () => {
    // Issue 41, item 7: an hour's lease; a second worker process already runs the queue when the
    // first is SIGKILLed mid-node. Its liveness hold went with its connections, and the second
    // worker's next claim takes the run over (the time from the kill to the new token, measured
    // on the job row, not on sleeps) and finishes it from the last checkpoint.
    const queue = `ts-dead-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-dead-${randomUUID()}`;
    const { graph } = await import("./fixtures/graph.mjs");
    const job = await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] });
    const admin = pool();
    // The lease clock of this database started long ago: on a database the queue was first called
    // on seconds ago (this suite's fresh copy), ai._server_start() is that first call, and dead
    // workers' runs are taken over only 30 s after it (a failover's grace: docs/queue.md)
    await admin.query(
      "insert into ai.lease_timelines (timeline, first_seen)" +
        " select ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer, '-infinity'" +
        " on conflict (timeline) do update set first_seen = '-infinity'",
    );
    const holds = async () =>
      Number(
        (
          await admin.query(
            "select count(*) as n from pg_locks l join pg_database d on d.oid = l.database where l.locktype = 'advisory' and l.classid = 1095522636 and d.datname = current_database()",
          )
        ).rows[0].n,
      );
    const before = await holds();
    // and so did the server, for these workers: a server started less than 30 s ago (after
    // test/worker-outage.test.ts restarts it) holds every lease for a restart's grace, so the
    // takeover would wait for it. app_service may freeze the lease clock's start (ai_test_clock).
    const started = { PGOPTIONS: "-c ai.frozen_server_start=-infinity" };
    const first = workerProcess(queue, { HANG_ON_FIRST_ATTEMPT: "1", LEASE_SECONDS: "3600", ...started });
    const firstExit = exited(first);
    let second: ChildProcess | null = null;
    try {
      await waitFor(async () => ((await nodeEvents(threadId)).some((e) => e.node === "slow") ? true : undefined), 30_000, "the slow node");
      const token = Number((await tenant.getJob(job.job_id)).fencing_token);
      second = workerProcess(queue, { HANG_ON_FIRST_ATTEMPT: "1", LEASE_SECONDS: "3600", ...started });
      await waitFor(async () => ((await holds()) >= before + 2 ? true : undefined), 30_000, "both workers hold their liveness");
      first.kill("SIGKILL");
      const killed = Date.now();
      expect((await firstExit).signal).toBe("SIGKILL");
      for (;;) {
        if (Number((await tenant.getJob(job.job_id)).fencing_token) > token) break;
        expect(Date.now() - killed).toBeLessThan(30_000);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(Date.now() - killed).toBeLessThan(2000);
      await waitFor(async () => ((await tenant.getJob(job.job_id)).status === "COMPLETED" ? true : undefined), 30_000, "the run completed");
      expect((await tenant.getJob(job.job_id)).attempts).toBe(2);
    } finally {
      first.kill("SIGKILL");
      if (second !== null) {
        const secondExit = exited(second);
        second.kill("SIGTERM");
        await secondExit;
      }
      await admin.end();
    }
  });

  it("parks a run that calls interrupt() for a person, and resumes it with the decision", async () => {
    const { Annotation, END, START, StateGraph, interrupt } = await import("@langchain/langgraph");
    const State = Annotation.Root({ steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode("draft", async () => ({ steps: ["drafted"] }))
      .addNode("publish", async (state) => {
        const decision = interrupt({ publish: state.steps });
        return { steps: [`published: ${String(decision)}`] };
      })
      .addEdge(START, "draft")
      .addEdge("draft", "publish")
      .addEdge("publish", END)
      .compile();
    const queue = `ts-hitl-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-hitl-${randomUUID()}`;
    const job = await new GraphRuns(tenant, graph, { queue }).start(threadId, { steps: [] });
    const worker = () => new GraphRuns(service, graph, { queue }).worker(service, { pollMs: 20 });
    expect((await worker().run({ drain: true })).awaitingHuman).toBe(1);
    expect((await tenant.getJob(job.job_id)).status).toBe("AWAITING_HUMAN");
    const [approval] = (await tenant.pendingApprovals()).filter((a) => a.thread_id === threadId);
    expect(approval!.action).toMatchObject({ interrupt: [{ publish: ["drafted"] }] });
    await tenant.resolveHuman(threadId, approval!.checkpoint_id, "yes");
    expect((await worker().run({ drain: true })).completed).toBe(1);
    const done = await tenant.getJob(job.job_id);
    expect(done.status).toBe("COMPLETED");
    expect(done.result).toEqual({ steps: ["drafted", "published: yes"] });
  });

  it("deduplicates a start on the thread and the input, with Python's key", async () => {
    const { graph } = await import("./fixtures/graph.mjs");
    const runs = new GraphRuns(tenant, graph, { queue: `ts-dedup-${randomUUID().slice(0, 8)}` });
    const threadId = `ts-dedup-${randomUUID()}`;
    const a = await runs.start(threadId, { steps: [], q: "é" });
    const b = await runs.start(threadId, { q: "é", steps: [] });
    expect(b.job_id).toBe(a.job_id);
    expect(a.idempotency_key).toBe(runDedupKey(threadId, { steps: [], q: "é" }));
    expect(pythonJson({ b: [1, "x"], a: null, c: "é" })).toBe('{"a": null, "b": [1, "x"], "c": "\\u00e9"}');
  });
});

describe("worker", () => {
  it("fails a job whose handler throws, with the error", async () => {
    const queue = `ts-fail-${randomUUID().slice(0, 8)}`;
    const threadId = (await tenant.createSession()).thread_id;
    const job = await tenant.enqueueJob(threadId, {}, { queue, maxAttempts: 1 });
    const stats = await new Worker(service, async () => {
      throw new Error("boom");
    }, { queue, pollMs: 20 }).run({ drain: true });
    expect(stats.failed).toBe(1);
    const failed = await tenant.getJob(job.job_id);
    expect(failed.status).toBe("FAILED");
    expect(failed.last_error).toContain("boom");
  });

  it("renews the lease while the handler runs, so a handler longer than the lease keeps its job", async () => {
    const queue = `ts-renew-${randomUUID().slice(0, 8)}`;
    const threadId = (await tenant.createSession()).thread_id;
    const job = await tenant.enqueueJob(threadId, {}, { queue });
    const stats = await new Worker(service, async (claimed, ctx) => {
      const first = claimed.lease_expires_at!.getTime();
      // wait (on the database, not a clock) until the lease was extended twice past the first one
      await waitFor(async () => {
        const now = await tenant.getJob(claimed.job_id);
        return now.lease_expires_at!.getTime() > first + 1000 ? true : undefined;
      }, 30_000, "two renewals");
      ctx.check();
      return { renewed: true };
    }, { queue, pollMs: 20, leaseSeconds: 1 }).run({ drain: true });
    expect(stats).toMatchObject({ completed: 1, lost: 0 });
    expect((await tenant.getJob(job.job_id)).result).toEqual({ renewed: true });
  });

  it("keeps its row of the workers' registry as the Python workers do: alive while idle, stopped after stop()", async () => {
    // the claims (an idle worker's polls), renewals and liveness hold write it (ai.list_workers)
    const queue = `ts-registry-${randomUUID().slice(0, 8)}`;
    const workerId = `ts-registry-${randomUUID().slice(0, 8)}`;
    const worker = new Worker(service, async () => undefined, { queue, pollMs: 20, workerId });
    const run = worker.run();
    const listed = async () =>
      (await servicePool.query("select * from ai.list_workers(10000) where worker = $1", [workerId])).rows[0];
    const idle = await waitFor(async () => {
      const w = await listed();
      return w?.liveness_held && w.queue === queue ? w : undefined;
    }, 30_000, "the idle worker listed with its liveness hold");
    expect(idle).toMatchObject({ state: "alive", queue, jobs: "0", thread_ids: [] });
    worker.stop();
    await run;
    expect(await listed()).toMatchObject({ state: "stopped", liveness_held: false });
  });

  it("stops claiming on stop() and releases a job still running after the grace period", async () => {
    const queue = `ts-stop-${randomUUID().slice(0, 8)}`;
    const threadId = (await tenant.createSession()).thread_id;
    const job = await tenant.enqueueJob(threadId, {}, { queue });
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const worker = new Worker(service, async (_job, ctx) => {
      started();
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      ctx.check();
    }, { queue, pollMs: 20, graceMs: 100 });
    const run = worker.run();
    await running;
    worker.stop();
    const stats = await run;
    expect(stats.released).toBe(1);
    const released = await tenant.getJob(job.job_id);
    expect(released.status).toBe("PENDING");
    expect((await tenant.jobAttempts(job.job_id)).map((a) => a.outcome)).toEqual(["released"]);
  });

  it("aborts a handler whose lease was taken over, and its fenced writes fail with LeaseLost", async () => {
    const queue = `ts-lost-${randomUUID().slice(0, 8)}`;
    const threadId = (await tenant.createSession()).thread_id;
    const job = await tenant.enqueueJob(threadId, {}, { queue });
    let writeError: unknown;
    const worker = new Worker(service, async (_job, ctx) => {
      // another claim takes the job over: cancel it, so the claim this handler holds is gone
      await tenant.cancelJob(ctx.job.job_id);
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      writeError = await ctx.client
        .appendMessage(ctx.job.thread_id, "assistant", "late", ctx.fence)
        .catch((e: unknown) => e);
      ctx.check();
    }, { queue, pollMs: 20, leaseSeconds: 1 });
    const stats = await worker.run({ drain: true });
    expect(stats.lost).toBe(1);
    expect(writeError).toBeInstanceOf(LeaseLost);
    expect((await tenant.getJob(job.job_id)).status).toBe("CANCELLED");
    expect(await tenant.getMessages(threadId)).toEqual([]);
  });
});
