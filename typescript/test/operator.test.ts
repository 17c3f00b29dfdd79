// The operator's and retention calls (Python's archive_sessions, restore_session, archive_jobs,
// copy_thread, checkpoints_between, delete_for_runs, prune_checkpoints, prune_idle_threads), one
// behaviour each, through the TypeScript client.
import { randomUUID } from "node:crypto";
import { Client, NotFound } from "../src/index.js";
import { roleClients } from "./db.js";

// clients over pools of the test roles (a pool connects on its first call)
const { a, b, service, end } = roleClients();
afterAll(end);

const thread = () => `op-${randomUUID()}`;

/** A checkpoint of `threadId`, its parent given, with `metadata`. */
function put(client: Client, threadId: string, parent: string | null, metadata: Record<string, unknown> = {}): Promise<string> {
  return client.putCheckpoint({ threadId, parentCheckpointId: parent, type: "json", checkpoint: Buffer.from("{}"), metadata });
}

describe("operator and retention calls", () => {
  it("archiveSessions moves a finished session to the archive and restoreSession brings it back", async () => {
    const id = thread();
    await a.createSession(id);
    await a.appendMessage(id, "user", "hello");
    await a.setSessionStatus(id, "completed");
    let archived = undefined;
    for (let batch = 0; batch < 100 && archived === undefined; batch += 1) {
      const rows = await service.archiveSessions({ olderThanSeconds: 0, batchSize: 1000 });
      archived = rows.find((r) => r.thread_id === id);
      if (rows.length === 0) break;
    }
    expect(archived).toMatchObject({ thread_id: id, owner: "tenant_a", status: "completed" });
    expect(archived!.completed_at).toBeInstanceOf(Date);
    expect(archived!.rows_moved.session_messages).toBe(1);
    await expect(a.getSession(id)).rejects.toBeInstanceOf(NotFound);
    const back = await service.restoreSession(id);
    expect(back).toMatchObject({ thread_id: id, status: "completed" });
    expect((await a.getMessages(id)).map((m) => m.content)).toEqual(["hello"]);
  });

  it("archiveJobs moves finished jobs to the archive", async () => {
    const id = thread();
    const queue = `op-${randomUUID().slice(0, 8)}`;
    await a.createSession(id);
    const job = await a.enqueueJob(id, {}, { queue });
    await a.cancelJob(job.job_id);
    let moved = 0;
    for (let n = await service.archiveJobs({ olderThanSeconds: 0 }); n > 0; n = await service.archiveJobs({ olderThanSeconds: 0 })) moved += n;
    expect(moved).toBeGreaterThanOrEqual(1);
    await expect(a.getJob(job.job_id)).rejects.toBeInstanceOf(NotFound);
  });

  it("copyThread copies every checkpoint; checkpointsBetween pages through a time range", async () => {
    const id = thread();
    await a.createSession(id);
    const first = await put(a, id, null, { step: 1 });
    const second = await put(a, id, first, { step: 2 });
    const target = thread();
    expect(await a.copyThread(id, target)).toBe(2);
    expect((await a.listCheckpoints(target)).map((c) => c.checkpoint_id).sort()).toEqual([first, second].sort());
    await expect(b.copyThread(id, thread())).rejects.toBeInstanceOf(NotFound);

    const from = new Date(Date.now() - 3600_000);
    const to = new Date(Date.now() + 3600_000);
    const page = await a.checkpointsBetween(id, from, to, { maxRows: 1 });
    expect(page.map((c) => [c.checkpoint_id, c.parent_checkpoint_id])).toEqual([[first, null]]);
    expect(page[0]!.created_at).toBeInstanceOf(Date);
    expect(page[0]!.metadata).toMatchObject({ step: 1 });
    const next = await a.checkpointsBetween(id, from, to, { afterCheckpointNs: "", afterCheckpointId: first });
    expect(next.map((c) => c.checkpoint_id)).toEqual([second]);
  });

  it("deleteForRuns deletes the checkpoints of runs; pruneCheckpoints keeps the newest; pruneIdleThreads walks in batches", async () => {
    const id = thread();
    await a.createSession(id);
    const kept = await put(a, id, null, { run_id: "run-keep" });
    await put(a, id, kept, { run_id: `run-${id}` });
    expect(await a.deleteForRuns([`run-${id}`])).toBe(1);
    expect((await a.listCheckpoints(id)).map((c) => c.checkpoint_id)).toEqual([kept]);

    const newest = await put(a, id, kept);
    expect(await a.pruneCheckpoints([id])).toBe(1);
    expect((await a.listCheckpoints(id)).map((c) => c.checkpoint_id)).toEqual([newest]);
    await put(a, id, newest);
    expect(await a.pruneCheckpoints([id], "delete")).toBe(2);
    expect(await a.listCheckpoints(id)).toEqual([]);

    const idle = thread();
    await a.createSession(idle);
    const one = await put(a, idle, null);
    await put(a, idle, one);
    let pruned = 0;
    let after: string | null = null;
    for (let batch = 0; batch < 1000; batch += 1) {
      const step = await a.pruneIdleThreads(0, { maxThreads: 1000, afterThreadId: after });
      pruned += step.pruned;
      after = step.next_thread_id;
      if (after === null) break;
    }
    expect(pruned).toBeGreaterThanOrEqual(1);
    expect((await a.listCheckpoints(idle)).length).toBe(1);
  });
});
