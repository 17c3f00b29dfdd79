// The client against the real database (no mocks): one behaviour per test, as tenants
// (tenant_a, tenant_b: ai_user) and a worker service (app_service: ai_service).
import { randomUUID } from "node:crypto";
import pg from "pg";
import {
  AgentStateError,
  Client,
  JobContext,
  ERRORS_BY_SQLSTATE,
  InvalidArgument,
  LeaseLost,
  NotFound,
  ThreadDeleted,
  TooLarge,
  idempotencyKey,
} from "../src/index.js";
import { pool } from "./db.js";

let superuser: pg.Pool;
let tenantPool: pg.Pool;
let otherPool: pg.Pool;
let servicePool: pg.Pool;
let tenant: Client;
let other: Client;
let service: Client;

beforeAll(() => {
  superuser = pool();
  tenantPool = pool("tenant_a");
  otherPool = pool("tenant_b");
  servicePool = pool("app_service");
  tenant = new Client(tenantPool);
  other = new Client(otherPool);
  service = new Client(servicePool);
});

afterAll(async () => {
  await Promise.all([superuser.end(), tenantPool.end(), otherPool.end(), servicePool.end()]);
});

const thread = () => `ts-${randomUUID()}`;
const queue = () => `ts-q-${randomUUID().slice(0, 8)}`;

describe("errors", () => {
  it("maps every SQLSTATE of ai.error_codes to a typed error", async () => {
    const { rows } = await superuser.query<{ sqlstate: string }>("select sqlstate from ai.error_codes order by 1");
    expect(rows.length).toBeGreaterThan(10);
    const missing = rows.map((r) => r.sqlstate).filter((code) => !(code in ERRORS_BY_SQLSTATE));
    expect(missing).toEqual([]);
    for (const row of rows) expect(new ERRORS_BY_SQLSTATE[row.sqlstate]!("x").sqlstate).toBe(row.sqlstate);
  });

  it("raises NotFound for another tenant's thread, with the SQLSTATE and the server's error as cause", async () => {
    const id = thread();
    await tenant.createSession(id);
    const error = await other.getSession(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFound);
    expect(error).toBeInstanceOf(AgentStateError);
    expect((error as NotFound).sqlstate).toBe("AS001");
    expect((error as NotFound).cause).toHaveProperty("code", "AS001");
  });

  it("raises InvalidArgument for a bad argument", async () => {
    await expect(tenant.createSession("")).rejects.toBeInstanceOf(InvalidArgument);
  });

  it("passes errors that are not ours through unchanged", async () => {
    const error = await tenant.query("select 1/0").catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(AgentStateError);
    expect(error).toHaveProperty("code", "22012");
  });
});

describe("sessions, messages, events", () => {
  it("creates a session owned by the caller", async () => {
    const id = thread();
    const session = await tenant.createSession(id, { model: "gpt-x" });
    expect(session.thread_id).toBe(id);
    expect(session.owner).toBe("tenant_a");
    expect(session.config).toEqual({ model: "gpt-x" });
    expect(session.created_at).toBeInstanceOf(Date);
    expect((await tenant.setSessionStatus(id, "completed")).status).toBe("completed");
  });

  it("appends messages idempotently, numbered from 1 with no gap", async () => {
    const id = (await tenant.createSession()).thread_id;
    const first = await tenant.appendMessage(id, "user", { text: "Plan Lisbon" }, { turn: 1 });
    const retry = await tenant.appendMessage(id, "user", { text: "Plan Lisbon" }, { turn: 1 });
    expect(first.inserted).toBe(true);
    expect(retry.inserted).toBe(false);
    expect(retry.message.seq).toBe(1);
    const batch = await tenant.appendMessages(id, [
      { role: "assistant", content: ["a", "list"] },
      { role: "tool_call", content: { name: "search" }, idempotency_key: "k1" },
    ]);
    expect(batch.map((r) => r.message.seq)).toEqual([2, 3]);
    const messages = await tenant.getMessages(id);
    expect(messages.map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(typeof messages[0]!.seq).toBe("number");
    expect(messages[1]!.content).toEqual(["a", "list"]);
    expect((await tenant.getMessages(id, { afterSeq: 2 })).map((m) => m.seq)).toEqual([3]);
  });

  it("records and reads events", async () => {
    const id = (await tenant.createSession()).thread_id;
    await tenant.recordEvent(id, "tool_call", { name: "search" });
    await tenant.recordEvent(id, "note", [1, 2]);
    const events = await tenant.getEvents(id, { kinds: ["note"] });
    expect(events.map((e) => e.payload)).toEqual([[1, 2]]);
  });

  it("lets a service act for a user in one transaction", async () => {
    const id = thread();
    const session = await service.actingAs("tenant_a", async (alice) => {
      const s = await alice.createSession(id);
      await alice.appendMessage(id, "user", { text: "hi" });
      return s;
    });
    expect(session.owner).toBe("tenant_a");
    expect((await tenant.getMessages(id)).length).toBe(1);
  });
});

describe("queue", () => {
  it("enqueues a batch in one call, answered job by job in order", async () => {
    const a = (await tenant.createSession()).thread_id;
    const b = (await tenant.createSession()).thread_id;
    const q = queue();
    const earlier = await tenant.enqueueJob(a, { n: 0 }, { queue: q, idempotencyKey: "k0" });
    const later = new Date(Date.now() + 3_600_000);
    const jobs = await tenant.enqueueJobs(
      [
        { thread_id: a, payload: { n: 1 }, idempotency_key: "k0" },
        { thread_id: b, payload: { n: 2 }, run_at: later, priority: 5, idempotency_key: "k2" },
        { thread_id: b, payload: { n: 3 }, idempotency_key: "k2" },
        { thread_id: a },
      ],
      { queue: q, maxAttempts: 2 },
    );
    expect(jobs.map((j) => j.payload)).toEqual([{ n: 0 }, { n: 2 }, { n: 2 }, {}]);
    expect(jobs[0].job_id).toBe(earlier.job_id);
    expect(jobs[2].job_id).toBe(jobs[1].job_id);
    expect(jobs[1].priority).toBe(5);
    expect(new Date(jobs[1].run_at).getTime()).toBe(later.getTime());
    expect(jobs[3].max_attempts).toBe(2);
    await expect(tenant.enqueueJobs([{ thread_id: a }, { thread_id: thread() }], { queue: q })).rejects.toBeInstanceOf(NotFound);
    await expect(tenant.enqueueJobs(Array(5001).fill({ thread_id: a }), { queue: q })).rejects.toBeInstanceOf(TooLarge);
    expect(await tenant.enqueueJobs([], { queue: q })).toEqual([]);
  });

  it("enqueues, claims with a fencing token, renews and completes", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    const job = await tenant.enqueueJob(id, { task: "plan" }, { queue: q, idempotencyKey: "once" });
    expect((await tenant.enqueueJob(id, { task: "plan" }, { queue: q, idempotencyKey: "once" })).job_id).toBe(job.job_id);
    const claimed = await service.claimJob("ts-worker", { queue: q, leaseSeconds: 30 });
    expect(claimed?.job_id).toBe(job.job_id);
    expect(claimed?.status).toBe("IN_PROGRESS");
    expect(await service.claimJob("ts-worker", { queue: q })).toBeNull();
    const expiry = await service.renewLease(claimed!.job_id, claimed!.fencing_token, 60);
    expect(expiry).toBeInstanceOf(Date);
    const renewed = await service.renewLeases("ts-worker", [claimed!.job_id], [claimed!.fencing_token], 60);
    expect(renewed.map((r) => r.job_id)).toEqual([claimed!.job_id]);
    const done = await service.completeJob(claimed!.job_id, claimed!.fencing_token, { ok: true });
    expect(done.status).toBe("COMPLETED");
    expect((await tenant.getJob(job.job_id)).result).toEqual({ ok: true });
  });

  it("rejects a stale fencing token with LeaseLost", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    await tenant.enqueueJob(id, {}, { queue: q });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    await expect(service.completeJob(claimed.job_id, claimed.fencing_token + 1)).rejects.toBeInstanceOf(LeaseLost);
    await expect(
      tenant.appendMessage(id, "assistant", "x", { jobId: claimed.job_id, fencingToken: claimed.fencing_token + 1 }),
    ).rejects.toBeInstanceOf(LeaseLost);
  });

  it("fails a job back to PENDING with its error, and keeps the attempts", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    await tenant.enqueueJob(id, {}, { queue: q, maxAttempts: 3 });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    const failed = await service.failJob(claimed.job_id, claimed.fencing_token, "boom", 0);
    expect(failed.status).toBe("PENDING");
    expect(failed.last_error).toBe("boom");
    const attempts = await tenant.jobAttempts(claimed.job_id);
    expect(attempts.map((a) => a.outcome)).toEqual(["failed"]);
    expect((await tenant.queueStats(q))[0]!.pending).toBe(1);
  });
});

describe("side effects, approvals, usage, streams", () => {
  it("computes the same idempotency key as ai.idempotency_key", async () => {
    const parts = ["email", "alice", 42, null, "", "é€𝄞"];
    const rows = await tenant.query<{ key: string }>("select ai.idempotency_key(variadic $1::text[]) as key", [
      parts.map((p) => (p === null ? null : String(p))),
    ]);
    expect(idempotencyKey(...parts)).toBe(rows[0]!.key);
  });

  it("runs a side effect once per key and returns the recorded result after", async () => {
    const id = (await tenant.createSession()).thread_id;
    const key = idempotencyKey("email", "alice");
    const begun = await tenant.beginSideEffect(id, key, { to: "alice" });
    expect(begun.outcome).toBe("execute");
    await tenant.finishSideEffect(id, key, { sent: true }, { fencingToken: begun.attempt }); // no job: the attempt fences
    const again = await tenant.beginSideEffect(id, key, { to: "alice" });
    expect(again.outcome).toBe("done");
    expect(again.result).toEqual({ sent: true });
    expect((await tenant.getSideEffect(id, key)).status).toBe("done");
  });

  it("parks a job for a person and resumes it with the decision", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    await tenant.enqueueJob(id, { step: 1 }, { queue: q });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    const approvalId = await service.requestHuman(claimed.job_id, claimed.fencing_token, "cp-1", { publish: true });
    expect((await tenant.getJob(claimed.job_id)).status).toBe("AWAITING_HUMAN");
    const pending = await tenant.pendingApprovals();
    expect(pending.map((a) => a.approval_id)).toContain(approvalId);
    const resolved = await tenant.resolveHuman(id, "cp-1", "yes");
    expect(resolved.status).toBe("resolved");
    const again = (await service.claimJob("ts-worker", { queue: q }))!;
    expect((again.payload as { human: { decision: string } }).human.decision).toBe("yes");
  });

  it("records usage once per key with an exact cost", async () => {
    const id = (await tenant.createSession()).thread_id;
    const usage = { model: "gpt-x", inputTokens: 10, outputTokens: 5, cost: "0.000123" };
    const first = await tenant.recordUsage(id, "call-1", usage);
    const retry = await tenant.recordUsage(id, "call-1", usage);
    expect(first.inserted).toBe(true);
    expect(retry.inserted).toBe(false);
    expect(first.cost).toBe("0.000123");
    const summary = await tenant.usageSummary(new Date(Date.now() - 3600_000), new Date(Date.now() + 3600_000), ["thread"]);
    expect(summary.find((r) => r.thread_id === id)?.records).toBe(1);
  });

  it("persists a stream while it is written and finishes it into a message", async () => {
    const id = (await tenant.createSession()).thread_id;
    await tenant.openStream(id, "s1", { turn: 1 });
    await tenant.appendStreamChunks(id, "s1", 1, ["Hel", "lo"]);
    expect((await tenant.readStream(id, "s1")).map((c) => c.content)).toEqual(["Hel", "lo"]);
    const finished = await tenant.finishStream(id, "s1");
    expect(finished.message.content).toBeDefined();
    expect((await tenant.getStream(id, "s1")).status).toBe("finished");
  });
});

describe("the rest of the client, one call each", () => {
  it("lists sessions, hides messages, and tells the clock, the owner and a ULID", async () => {
    const id = (await tenant.createSession()).thread_id;
    await tenant.appendMessages(id, [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: "c" },
    ]);
    expect((await tenant.hideLastMessage(id))?.seq).toBe(3);
    expect((await tenant.visibleMessages(id)).map((m) => m.seq)).toEqual([1, 2]);
    expect(await tenant.hideMessages(id)).toBe(2);
    expect(await tenant.visibleMessages(id)).toEqual([]);
    expect(await tenant.hideLastMessage(id)).toBeNull();
    expect((await tenant.listSessions({ maxRows: 1000 })).map((x) => x.thread_id)).toContain(id);
    expect(await tenant.currentOwner()).toBe("tenant_a");
    expect(await tenant.now()).toBeInstanceOf(Date);
    expect(await tenant.ulid()).toMatch(/^[0-9A-Z]{26}$/);
  });

  it("fences a write, lists jobs, reaps nothing live, and retries a dead job", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    const job = await tenant.enqueueJob(id, {}, { queue: q, maxAttempts: 1 });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    expect(await service.fencedWrite(claimed.job_id, claimed.fencing_token)).toBeInstanceOf(Date);
    await expect(service.fencedWrite(claimed.job_id, claimed.fencing_token + 1)).rejects.toBeInstanceOf(LeaseLost);
    expect(await service.reapExpired(q)).toBe(0);
    expect((await service.failJob(claimed.job_id, claimed.fencing_token, "dead")).status).toBe("FAILED");
    expect((await tenant.listJobs({ queue: q, status: "FAILED" })).map((j) => j.job_id)).toEqual([job.job_id]);
    expect((await service.retryDeadJob(job.job_id)).status).toBe("PENDING");
  });

  it("abandons a side effect whose tool throws, so the next attempt executes it", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    await tenant.enqueueJob(id, {}, { queue: q });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    const ctx = new JobContext(claimed, service);
    await expect(ctx.sideEffect(["charge", 1], () => Promise.reject(new Error("declined")))).rejects.toThrow("declined");
    const key = idempotencyKey("charge", 1);
    expect((await tenant.getSideEffect(id, key)).status).toBe("abandoned");
    expect(await ctx.sideEffect(["charge", 1], (call) => ({ charged: call.attempt }))).toEqual({ charged: 2 });
    expect(await ctx.sideEffect(["charge", 1], () => ({ charged: "again" }))).toEqual({ charged: 2 });
  });

  it("reads an approval by id and abandons a stream", async () => {
    const id = (await tenant.createSession()).thread_id;
    const q = queue();
    await tenant.enqueueJob(id, {}, { queue: q });
    const claimed = (await service.claimJob("ts-worker", { queue: q }))!;
    const approvalId = await service.requestHuman(claimed.job_id, claimed.fencing_token, "cp-9", { ok: "?" });
    expect((await tenant.getApproval(approvalId)).status).toBe("pending");
    await tenant.openStream(id, "s2");
    await tenant.appendStreamChunks(id, "s2", 1, ["partial"]);
    expect((await tenant.abandonStream(id, "s2")).status).toBe("abandoned");
    expect((await tenant.readStream(id, "s2")).map((c) => c.content)).toEqual(["partial"]);
  });
});

describe("long sessions and retrieved context", () => {
  it("reports a context window, records a compaction that keeps the originals, and a turn's documents", async () => {
    const id = (await tenant.createSession()).thread_id;
    for (let turn = 1; turn <= 6; turn += 1) {
      await tenant.appendMessage(id, "user", { text: "x".repeat(200) }, { turn, tokenCount: 100 });
    }
    const window = await tenant.contextWindow(id, 400, 2, 0.5);
    expect(window.compaction_due).toBe(true);
    expect(window.last_seq).toBe(6);
    const summary = await tenant.recordCompaction(id, "the user asked six times", window.compact_through_seq!, 10);
    expect(summary.inserted).toBe(true);
    expect((await tenant.getMessages(id)).length).toBe(7); // the originals stay
    expect((await tenant.contextWindow(id, 400, 2, 0.5)).messages.some((m) => m.is_summary)).toBe(true);
    const recorded = await tenant.recordRetrieval(id, 1, [{ doc: "lisbon.md" }], { idempotencyKey: "r1" });
    expect(recorded.inserted).toBe(true);
    expect((await tenant.recordRetrieval(id, 1, [{ doc: "lisbon.md" }], { idempotencyKey: "r1" })).inserted).toBe(false);
    const context = await tenant.getTurnContext(id, 1);
    expect(JSON.stringify(context.retrievals)).toContain("lisbon.md");
  });
});

describe("checkpoints", () => {
  it("lists past one page: ai.list_checkpoints returns a bounded page, the saver reads on by the cursor", async () => {
    const { AgentStateSaver } = await import("../src/langgraph.js");
    const { emptyCheckpoint } = await import("@langchain/langgraph-checkpoint");
    const id = thread();
    const saver = new AgentStateSaver(tenantPool);
    let config: Parameters<typeof saver.put>[0] = { configurable: { thread_id: id, checkpoint_ns: "" } };
    for (let step = 0; step < 520; step++) {
      const cp = { ...emptyCheckpoint(), id: `cp-${String(step).padStart(4, "0")}` };
      config = await saver.put(config, cp, { source: "loop", step, parents: {} }, {});
    }
    expect((await tenant.listCheckpoints(id)).length).toBe(100); // the server's page
    const all: string[] = [];
    for await (const t of saver.list({ configurable: { thread_id: id } })) all.push(t.checkpoint.id);
    expect(all.length).toBe(520);
    expect(new Set(all).size).toBe(520);
    expect(all[0]).toBe("cp-0519");
    const some: string[] = [];
    for await (const t of saver.list({ configurable: { thread_id: id } }, { limit: 510 })) some.push(t.checkpoint.id);
    expect(some.length).toBe(510);
  });

  it("walks a checkpoint's lineage and forks a thread from it", async () => {
    const id = thread();
    const put = (cp: string, parent: string | null) =>
      tenant.putCheckpoint({ threadId: id, checkpointId: cp, parentCheckpointId: parent, type: "json", checkpoint: Buffer.from("{}") });
    await put("0001", null);
    await put("0002", "0001");
    await put("0003", "0002");
    const lineage = await tenant.checkpointLineage(id, "0003");
    expect(lineage.map((s) => s.checkpoint_id)).toEqual(["0003", "0002", "0001"]);
    const fork = await tenant.forkThread(id, "0002");
    expect((await tenant.listCheckpoints(fork)).map((c) => c.checkpoint_id).sort()).toEqual(["0001", "0002"]);
  });

  it("puts, reads, lists and deletes a checkpoint with its values and writes", async () => {
    const id = thread();
    const cp = await tenant.putCheckpoint({
      threadId: id,
      checkpointId: "0001",
      type: "json",
      checkpoint: Buffer.from('{"v":4}'),
      metadata: { step: 1 },
      channelVersions: { a: "1" },
      values: [{ channel: "a", version: "1", type: "json", blob: Buffer.from("[1,2]") }],
    });
    expect(cp).toBe("0001");
    await tenant.putWrites(id, "", "0001", "task-1", [{ idx: 0, channel: "a", type: "json", blob: Buffer.from("[3]") }]);
    const row = (await tenant.getCheckpoint(id))!;
    expect(row.checkpoint.toString()).toBe('{"v":4}');
    expect(row.blob_channels).toEqual(["a"]);
    expect(row.blobs![0]!.toString()).toBe("[1,2]");
    expect(row.write_task_ids).toEqual(["task-1"]);
    expect(row.write_blobs![0]!.toString()).toBe("[3]");
    expect((await tenant.listCheckpoints(id, { metadataFilter: { step: 1 } })).length).toBe(1);
    expect(await tenant.deleteThread(id)).toBe(true);
    expect(await tenant.getCheckpoint(id)).toBeNull();
    await expect(
      tenant.putCheckpoint({ threadId: id, checkpointId: "0002", type: "json", checkpoint: Buffer.from("{}") }),
    ).rejects.toBeInstanceOf(ThreadDeleted);
  });
});
