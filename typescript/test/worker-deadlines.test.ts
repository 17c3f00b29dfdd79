// Deadlines and snooze in the TypeScript worker (issue 38 items 1 and 4), against the real
// database: a handler that never returns is aborted (AbortSignal) at its attempt's deadline, the
// lease is never renewed past it and the server refuses the handler's late write (AS006); the next
// claim retries the job and the one after its last attempt dead-letters it, "deadline exceeded" in
// its history. A handler that throws Snooze gives its job back without spending an attempt.
// The database clock runs here (a fraction of a second of timeout): every wait is on a condition.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { Client, DeadlineExceeded, LeaseLost, Snooze, Worker } from "../src/index.js";
import { pool, waitFor } from "./db.js";

let servicePool: pg.Pool;
let service: Client;

beforeAll(() => {
  servicePool = pool("app_service");
  service = new Client(servicePool);
});
afterAll(async () => {
  await servicePool.end();
});

async function enqueue(queue: string, options: Parameters<Client["enqueueJob"]>[2] = {}): Promise<number> {
  const threadId = `ts-dl-${randomUUID()}`;
  await service.createSession(threadId);
  return (await service.enqueueJob(threadId, {}, { queue, ...options })).job_id;
}

describe("deadlines", () => {
  it("aborts a handler that never returns at its deadline, retries it, then dead-letters it", async () => {
    const queue = `ts-dl-${randomUUID().slice(0, 8)}`;
    const jobId = await enqueue(queue, { maxAttempts: 2, timeoutSeconds: 0.5 });
    const seen: { token: number; deadlineSet: boolean; abortedWith: string; lateWrite: string; ctxWrite: string }[] = [];
    const worker = new Worker(
      service,
      async (job, ctx) => {
        const entry = { token: job.fencing_token, deadlineSet: ctx.deadline !== null, abortedWith: "", lateWrite: "", ctxWrite: "" };
        seen.push(entry);
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        entry.abortedWith = (ctx.signal.reason as Error).constructor.name;
        // the hung handler's late write, straight to the server, and through its context
        entry.lateWrite = await service.fencedWrite(job.job_id, job.fencing_token).then(
          () => "accepted",
          (error: unknown) => (error instanceof LeaseLost ? "refused" : String(error)),
        );
        entry.ctxWrite = await (async () => ctx.recordEvent("late"))().then(
          () => "accepted",
          (error: unknown) => (error instanceof DeadlineExceeded ? "refused at once" : String(error)),
        );
        return new Promise(() => undefined); // and it never returns
      },
      { queue, leaseSeconds: 30, pollMs: 20, liveness: false },
    );
    const running = worker.run();
    try {
      const failed = await waitFor(
        async () => {
          const job = await service.getJob(jobId);
          return job.status === "FAILED" ? job : undefined;
        },
        30_000,
        "the dead letter",
      );
      expect(failed.last_error).toBe("deadline exceeded: attempt 2 ran out of time");
      const attempts = await service.jobAttempts(jobId);
      expect(attempts.map((a) => [a.outcome, a.error])).toEqual([
        ["deadline_exceeded", "deadline exceeded"],
        ["deadline_exceeded", "deadline exceeded"],
      ]);
      expect(attempts.map((a) => a.lease_expires_at!.getTime() - a.claimed_at!.getTime())).toEqual([500, 500]);
      await waitFor(async () => (worker.stats.timedOut === 2 ? true : undefined), 10_000, "both attempts booked");
    } finally {
      worker.stop();
      await running;
    }
    expect(seen.map((s) => [s.token, s.deadlineSet, s.abortedWith, s.lateWrite, s.ctxWrite])).toEqual([
      [1, true, "DeadlineExceeded", "refused", "refused at once"],
      [2, true, "DeadlineExceeded", "refused", "refused at once"],
    ]);
    expect([worker.stats.completed, worker.stats.failed, worker.stats.timedOut]).toEqual([0, 0, 2]);
  });

  it("a renewal never passes the attempt's deadline", async () => {
    const queue = `ts-dl-${randomUUID().slice(0, 8)}`;
    const jobId = await enqueue(queue, { timeoutSeconds: 30 });
    const [job] = await service.claimJobs("ts-dl-renewer", 600, queue, 1);
    expect(job!.job_id).toBe(jobId);
    const renewed = await service.renewLease(jobId, job!.fencing_token, 600);
    expect(renewed.getTime()).toBe(job!.claimed_at!.getTime() + 30_000);
  });
});

describe("snooze", () => {
  it("a handler that throws Snooze gives its job back without spending an attempt", async () => {
    const queue = `ts-dl-${randomUUID().slice(0, 8)}`;
    const jobId = await enqueue(queue, { maxAttempts: 1 });
    const worker = new Worker(
      service,
      async () => {
        throw new Snooze(3600); // a 429 with retry_after: an hour
      },
      { queue, pollMs: 20, liveness: false },
    );
    const running = worker.run();
    try {
      await waitFor(async () => (worker.stats.snoozed === 1 ? true : undefined), 10_000, "the snooze");
    } finally {
      worker.stop();
      await running;
    }
    const job = await service.getJob(jobId);
    expect([job.status, job.attempts, job.fencing_token]).toEqual(["PENDING", 0, 1]);
    // an hour after the snooze: ai.now() read twice in the call (the delay, then the update), in
    // milliseconds here, may straddle a millisecond
    const ahead = job.run_at.getTime() - job.updated_at.getTime();
    expect(ahead).toBeGreaterThanOrEqual(3_599_990);
    expect(ahead).toBeLessThanOrEqual(3_600_000);
    expect((await service.jobAttempts(jobId)).map((a) => a.outcome)).toEqual(["snoozed"]);
    expect(await service.claimJobs("ts-dl-other", 60, queue, 1)).toEqual([]); // not before its time
    await expect(service.fencedWrite(jobId, 1)).rejects.toBeInstanceOf(LeaseLost);
  });
});

describe("enqueue", () => {
  it("passes deadlines only when given, one by one in a batch", async () => {
    const queue = `ts-dl-${randomUUID().slice(0, 8)}`;
    const threadId = `ts-dl-${randomUUID()}`;
    await service.createSession(threadId);
    const deadline = new Date(Date.now() + 3_600_000);
    const [timed, plain] = await service.enqueueJobs(
      [{ thread_id: threadId, timeout_seconds: 5, deadline }, { thread_id: threadId }],
      { queue },
    );
    expect([timed!.deadline?.getTime(), plain!.deadline]).toEqual([deadline.getTime(), null]);
    expect(timed!.timeout).not.toBeNull();
    expect(plain!.timeout).toBeNull();
    const one = await service.enqueueJob(threadId, {}, { queue, startBy: deadline });
    expect(one.start_by?.getTime()).toBe(deadline.getTime());
  });
});
