// The TypeScript client against the Python one: every SQL function a Python client method calls
// is called by this client too, or named in NOT_MIRRORED with the reason; and the methods that
// closed the gap, one behaviour each, as tests/python/test_console_reads.py, test_evals.py and
// test_queue_client.py check them.
import { randomUUID } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { NotFound } from "../src/index.js";
import { roleClients } from "./db.js";

const root = process.env.AGENT_STATE_ROOT ?? path.resolve(process.cwd(), "..");

/** The Python client's methods' modules: the bases of Client / AsyncClient (python/agent_state/client.py). */
const PYTHON_CLIENT_MODULES = [
  "client", "sessions", "messages", "checkpoints", "evals", "retention", "queue", "side_effects", "hitl", "usage",
  "retrievals", "streams", "console_reads", "memory", "compaction",
]; // prettier-ignore

/** What Python's client calls and this one does not, and why. */
const NOT_MIRRORED: Record<string, string> = {
  // computed here without a round trip: idempotencyKey(...parts) gives the same key
  idempotency_key: "computed locally",
}; // prettier-ignore

function calledIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\bai\.([a-z][a-z_0-9]*)\(/g)].map((m) => m[1]!));
}

// clients over pools of the test roles (a pool connects on its first call)
const { a: tenant, b: other, service, end } = roleClients();
afterAll(end);

const queue = () => `parity-${randomUUID().slice(0, 8)}`;

describe("parity with the Python client", () => {
  it("calls every SQL function the Python client's methods call, but those NOT_MIRRORED", () => {
    const python = new Set<string>();
    for (const name of PYTHON_CLIENT_MODULES) {
      for (const f of calledIn(readFileSync(path.join(root, "python", "agent_state", `${name}.py`), "utf8"))) python.add(f);
    }
    const ours = new Set<string>();
    for (const file of readdirSync(path.join(root, "typescript", "src"))) {
      for (const f of calledIn(readFileSync(path.join(root, "typescript", "src", file), "utf8"))) ours.add(f);
    }
    const missing = [...python].filter((f) => !ours.has(f)).sort();
    expect(missing).toEqual(Object.keys(NOT_MIRRORED).filter((f) => python.has(f)).sort());
    expect(Object.keys(NOT_MIRRORED).filter((f) => ours.has(f))).toEqual([]); // mirrored after all: drop it from the list
  });

  it("completeJobs completes several jobs in one call, idempotently; completeAndClaim completes and claims in one", async () => {
    const q = queue();
    for (let i = 0; i < 4; i += 1) {
      const threadId = `parity-${randomUUID()}`; // a claim takes one job per thread: one job each
      await tenant.createSession(threadId);
      await tenant.enqueueJob(threadId, { i }, { queue: q });
    }
    const [a, b] = await service.claimJobs("parity-w", 60, q, 2);
    const done: [number, number, unknown][] = [
      [a!.job_id, a!.fencing_token, { ok: "a" }],
      [b!.job_id, b!.fencing_token, null],
    ];
    expect((await service.completeJobs(done)).sort()).toEqual([a!.job_id, b!.job_id].sort());
    expect((await service.completeJobs(done)).sort()).toEqual([a!.job_id, b!.job_id].sort()); // again: the same answer
    expect((await service.getJob(a!.job_id)).result).toEqual({ ok: "a" });
    expect(await service.completeJobs([[a!.job_id, a!.fencing_token + 1, null]])).toEqual([]); // a stale token: left out

    const [c] = await service.claimJobs("parity-w", 60, q, 1);
    const requestId = randomUUID();
    const first = await service.completeAndClaim("parity-w", 60, q, 5, [[c!.job_id, c!.fencing_token, 3]], requestId);
    expect(first.completed).toEqual([c!.job_id]);
    expect(first.claimed.map((j) => [j.status, j.lease_owner])).toEqual([["IN_PROGRESS", "parity-w"]]);
    // the same call again (a retry after a lost answer) answers as the first did
    const again = await service.completeAndClaim("parity-w", 60, q, 5, [[c!.job_id, c!.fencing_token, 3]], requestId);
    expect(again.claimed.map((j) => [j.job_id, j.fencing_token])).toEqual(first.claimed.map((j) => [j.job_id, j.fencing_token]));
    expect((await service.getJob(c!.job_id)).result).toBe(3);
  });

  it("queueThroughput counts the jobs finished per bucket, the tenant's own", async () => {
    const q = queue();
    const threadId = `parity-${randomUUID()}`;
    await tenant.createSession(threadId);
    await tenant.enqueueJob(threadId, {}, { queue: q });
    const job = await service.claimJob("parity-w", { queue: q });
    await service.completeJob(job!.job_id, job!.fencing_token);
    await tenant.enqueueJob(threadId, { n: 2 }, { queue: q, maxAttempts: 1 });
    const failing = await service.claimJob("parity-w", { queue: q });
    await service.failJob(failing!.job_id, failing!.fencing_token, "boom");
    const [row, ...none] = await service.queueThroughput(q, { sinceSeconds: 3600, bucketSeconds: 3600 });
    expect(none).toEqual([]);
    expect(row).toMatchObject({ queue: q, completed: 1, failed: 1 });
    expect(row!.bucket_start).toBeInstanceOf(Date);
    expect(row!.mean_latency).not.toBeNull();
    expect((await tenant.queueThroughput(q)).map((r) => [r.completed, r.failed])).toEqual([[1, 1]]);
    expect(await other.queueThroughput(q)).toEqual([]); // not another tenant's
  });

  it("sessionStatusCounts counts sessions per status; listStreams lists a thread's streams", async () => {
    const threadId = `parity-${randomUUID()}`;
    const before = await tenant.sessionStatusCounts();
    await tenant.createSession(threadId);
    await tenant.openStream(threadId, "answer");
    await tenant.appendStreamChunks(threadId, "answer", 1, ["hel", "lo"]);
    const after = await tenant.sessionStatusCounts();
    expect(after.active).toBe((before.active ?? 0) + 1);
    expect(Object.keys(after).every((s) => ["active", "waiting", "completed", "failed", "cancelled"].includes(s))).toBe(true);
    const streams = await tenant.listStreams(threadId);
    expect(streams.map((s) => [s.stream_key, s.status, s.last_chunk, s.stale])).toEqual([["answer", "open", 2, false]]);
    await tenant.openStream(threadId, "second");
    expect((await tenant.listStreams(threadId, { maxRows: 1, afterStreamKey: "answer" })).map((s) => s.stream_key)).toEqual(["second"]);
    await expect(other.listStreams(threadId)).rejects.toBeInstanceOf(NotFound);
  });

  it("listForks lists the threads forked from a thread with the checkpoint each started from", async () => {
    const threadId = `parity-${randomUUID()}`;
    await tenant.createSession(threadId);
    const checkpointId = await tenant.putCheckpoint({ threadId, type: "json", checkpoint: Buffer.from("{}") });
    const forkId = await tenant.forkThread(threadId, checkpointId);
    const forks = await tenant.listForks(threadId);
    expect(forks).toEqual([
      expect.objectContaining({ fork_thread_id: forkId, owner: "tenant_a", status: "active", from_checkpoint_id: checkpointId, replay_job_id: null }),
    ]);
    expect(forks[0]!.created_at).toBeInstanceOf(Date);
    expect(await tenant.listForks(threadId, { afterThreadId: forkId })).toEqual([]);
  });

  it("ulidTime reads the time a ULID encodes", async () => {
    const before = await tenant.now();
    const id = await tenant.ulid();
    const at = await tenant.ulidTime(id);
    expect(at).toBeInstanceOf(Date);
    expect(Math.abs(at.getTime() - before.getTime())).toBeLessThan(60_000);
  });

  it("trajectory reads a thread's steps; recordEvalRun keeps a replay's outcome and getEvalRuns reads it back", async () => {
    const threadId = `parity-${randomUUID()}`;
    await tenant.createSession(threadId);
    await tenant.appendMessage(threadId, "user", "find a hotel in Lisbon");
    await tenant.appendMessage(threadId, "tool_call", { name: "search", arguments: { city: "Lisbon" } });
    await tenant.appendMessage(threadId, "tool_result", { name: "search", result: ["Alfama Inn"] });
    await tenant.appendMessage(threadId, "assistant", "Alfama Inn");
    const steps = await tenant.trajectory(threadId);
    const call = steps.find((s) => s.role === "tool_call");
    expect(call).toMatchObject({ tool_name: "search", arguments: { city: "Lisbon" }, is_final: false });
    expect(steps[steps.length - 1]).toMatchObject({ role: "assistant", content: "Alfama Inn", is_final: true });
    expect(await tenant.trajectory(threadId, { afterSeq: steps[steps.length - 1]!.seq })).toEqual([]);

    const run = await tenant.recordEvalRun(threadId, "model-b", false, {
      scores: { tools: 0, final: 0 },
      diff: { lines: ["- final"] },
      replayThreadId: `${threadId}-candidate`,
    });
    expect(run).toMatchObject({ thread_id: threadId, candidate: "model-b", passed: false, scores: { tools: 0, final: 0 } });
    expect((await tenant.getEvalRuns({ threadId })).map((r) => r.eval_id)).toEqual([run.eval_id]);
    expect(await other.getEvalRuns({ threadId })).toEqual([]);
  });
});
