// A tool's result whose storing is lost with the connection (issue 31, item 1), as
// tests/python/test_side_effect_lost_finish.py: the tool takes a SHARE lock on ai.side_effects
// from the test's own connection before it returns, so the finish waits on it; the test ends the
// waiting backend (pg_terminate_backend, waited on as a condition) and lets go. The finish is
// tried again and lands (the tool ran once); or, when every try is ended, OutcomeUnknown and the
// reservation is left to its lease: the next claim's attempt sees takenOver. The lease is passed
// with the frozen clock (ai.frozen_now) on the rerun's connection, never by sleeping.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Client, JobContext, OutcomeUnknown, idempotencyKey, isConnectionError } from "../src/index.js";
import { connectionConfig, pool, waitFor } from "./db.js";

let servicePool: pg.Pool;
let service: Client;

beforeAll(() => {
  servicePool = pool("app_service");
  service = new Client(servicePool);
});

afterAll(async () => {
  await servicePool.end();
});

/** Locks ai.side_effects against writes; ends the next `times` backends of app_service waiting on it; lets go. */
async function killFinishes(times: number): Promise<() => Promise<number[]>> {
  const admin = new pg.Client(connectionConfig());
  const watch = new pg.Client(connectionConfig());
  await admin.connect();
  await watch.connect();
  await admin.query("begin");
  await admin.query("lock table ai.side_effects in share mode");
  const killing = (async () => {
    const killed: number[] = [];
    try {
      for (let i = 0; i < times; i += 1) {
        const pid = await waitFor(
          async () => {
            const { rows } = await watch.query(
              "select pid from pg_stat_activity where usename = 'app_service' and datname = current_database() and wait_event_type = 'Lock'",
            );
            return rows[0]?.pid as number | undefined;
          },
          30_000,
          "a finish waiting on ai.side_effects",
        );
        await admin.query("select pg_terminate_backend($1)", [pid]);
        await waitFor(
          async () => ((await watch.query("select 1 from pg_stat_activity where pid = $1", [pid])).rowCount === 0 ? true : undefined),
          30_000,
          "the finish's backend ended",
        );
        killed.push(pid);
      }
      return killed;
    } finally {
      await admin.query("commit");
      await admin.end();
      await watch.end();
    }
  })();
  return () => killing;
}

async function claimed(leaseSeconds = 60) {
  const thread = (await service.createSession(`lost-finish-${randomUUID()}`)).thread_id;
  const q = `lost-finish-${randomUUID().slice(0, 8)}`;
  await service.enqueueJob(thread, {}, { queue: q });
  const job = (await service.claimJob("ts-worker", { queue: q, leaseSeconds }))!;
  return { job, q, thread };
}

describe("a side effect whose finish loses its connection", () => {
  it("knows a lost connection from a domain error", () => {
    expect(isConnectionError(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error("read-only"), { code: "25006" }))).toBe(true);
    expect(isConnectionError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionError(Object.assign(new Error("dup"), { code: "23505" }))).toBe(false);
  });

  it("tries the finish again: the tool runs once", async () => {
    const { job, thread } = await claimed();
    const ctx = new JobContext(job, service);
    const runs: boolean[] = [];
    let done: (() => Promise<number[]>) | undefined;
    const tool = async (call: { takenOver: boolean }) => {
      runs.push(call.takenOver);
      done = await killFinishes(1);
      return { sent: true };
    };
    expect(await ctx.sideEffect(["mail", 1], tool)).toEqual({ sent: true });
    expect(await done!()).toHaveLength(1);
    expect(await ctx.sideEffect(["mail", 1], tool)).toEqual({ sent: true });
    expect((await service.getSideEffect(thread, idempotencyKey("mail", 1))).status).toBe("done");
    expect(runs).toEqual([false]);
  });

  it("never abandons an unconfirmed finish: the next attempt is flagged takenOver", async () => {
    const { job, q, thread } = await claimed(5);
    const ctx = new JobContext(job, service);
    const runs: boolean[] = [];
    let done: (() => Promise<number[]>) | undefined;
    const tool = async (call: { takenOver: boolean }) => {
      runs.push(call.takenOver);
      if (runs.length === 1) done = await killFinishes(1);
      return { sent: true };
    };
    // no budget for a retry: the one try is ended
    await expect(ctx.sideEffect(["mail", 2], tool, undefined, { finishRetryMs: 0 })).rejects.toBeInstanceOf(OutcomeUnknown);
    expect(await done!()).toHaveLength(1);
    expect((await service.getSideEffect(thread, idempotencyKey("mail", 2))).status).toBe("reserved");

    const future = new Date(Date.now() + 3600_000).toISOString();
    const later = new pg.Pool({ ...connectionConfig("app_service"), max: 1, options: `-c ai.frozen_now=${future}` });
    try {
      const laterClient = new Client(later);
      const again = (await laterClient.claimJob("ts-worker-2", { queue: q }))!;
      expect(again.job_id).toBe(job.job_id);
      const rerun = new JobContext(again, laterClient);
      expect(await rerun.sideEffect(["mail", 2], tool)).toEqual({ sent: true });
    } finally {
      await later.end();
    }
    expect(runs).toEqual([false, true]);
  });
});
