// The TypeScript Worker is back within a second of the database, whatever the outage's length
// (issue 41, item 1), as tests/python/test_worker_outage.py: this worktree's private server is
// stopped for 20 s and started; the jobs that fell due meanwhile must be claimed and completed
// within 1 s (the contract) of the moment the server accepted connections again, found
// by a probe that connects every 10 ms. Read from the handler's own start times and from the
// jobs' claimed_at / finished_at (the database's clock). Only against the private cluster of
// `make test-typescript` (AGENT_STATE_ROOT), the only server a test may stop.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Client, Worker } from "../src/index.js";
import { connectionConfig, pool, waitFor } from "./db.js";

const ROOT = process.env.AGENT_STATE_ROOT;
const DATA = ROOT ? path.join(ROOT, ".pgdata", "data") : "";
const PGBIN = process.env.PGBIN ?? "/usr/lib/postgresql/15/bin";
const OUTAGE_MS = 20_000;
const BOUND_S = 1.0;

function pgCtl(...args: string[]): Promise<void> {
  const cmd = [path.join(PGBIN, "pg_ctl"), "-D", DATA, "-l", path.join(ROOT!, ".pgdata", "postgres.log"), "-w", "-t", "60", ...args];
  const argv = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: "ignore" });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args.join(" ")}: exit ${code}`))));
  });
}

/** Connects every 10 ms until the server answers: (performance.now(), the database's clock). */
async function firstAnswer(): Promise<{ at: number; db: Date }> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const client = new pg.Client(connectionConfig("app_service"));
    client.on("error", () => undefined);
    try {
      await client.connect();
      const at = performance.now();
      const { rows } = await client.query("select clock_timestamp() as now");
      await client.end();
      return { at, db: rows[0].now as Date };
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error("the server did not come back");
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function isPrivateCluster(): Promise<boolean> {
  if (!ROOT) return false;
  const admin = new pg.Client(connectionConfig());
  await admin.connect();
  try {
    const { rows } = await admin.query("select current_setting('data_directory') as dir");
    return path.resolve(rows[0].dir as string) === path.resolve(DATA);
  } finally {
    await admin.end();
  }
}

describe.skipIf(!ROOT)("the worker after a database outage", () => {
  it("claims and completes within a second of the database accepting connections again", async () => {
    if (!(await isPrivateCluster())) return;
    const servicePool = pool("app_service", 6);
    servicePool.on("error", () => undefined); // idle clients the server ended: the pool drops them
    const service = new Client(servicePool);
    const queue = `ts-outage-${randomUUID().slice(0, 8)}`;
    const started = new Map<number, number>();
    const warm = (await service.createSession(`ts-outage-${randomUUID()}`)).thread_id;
    const first = (await service.enqueueJob(warm, {}, { queue })).job_id;
    const due = new Date((await service.now()).getTime() + 3000); // due during the outage
    const ids: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const thread = (await service.createSession(`ts-outage-${randomUUID()}`)).thread_id;
      ids.push((await service.enqueueJob(thread, {}, { queue, runAt: due })).job_id);
    }
    const worker = new Worker(
      service,
      async (job) => {
        if (!started.has(job.job_id)) started.set(job.job_id, performance.now());
        return { ok: true };
      },
      { queue, concurrency: 2, pollMs: 200, log: () => undefined },
    );
    const running = worker.run();
    try {
      await waitFor(async () => (started.has(first) ? true : undefined), 30_000, "the first job ran");
      await pgCtl("-m", "fast", "stop");
      await new Promise((r) => setTimeout(r, OUTAGE_MS)); // the outage itself, not a wait for something
      const answer = firstAnswer();
      await pgCtl("start");
      const up = await answer;
      await waitFor(async () => (ids.every((id) => started.has(id)) ? true : undefined), 60_000, "the due jobs ran");
      const jobs = await waitFor(
        async () => {
          const all = await Promise.all(ids.map((id) => service.getJob(id)));
          return all.every((j) => j.status === "COMPLETED") ? all : undefined;
        },
        60_000,
        "they completed",
      );
      const handler = (Math.min(...ids.map((id) => started.get(id)!)) - up.at) / 1000;
      const claimed = Math.max(...jobs.map((j) => (j.claimed_at!.getTime() - up.db.getTime()) / 1000));
      const finished = Math.max(...jobs.map((j) => (j.finished_at!.getTime() - up.db.getTime()) / 1000));
      console.log(
        `[TS worker after a ${OUTAGE_MS / 1000} s outage] first handler ${handler.toFixed(3)} s, last claim ${claimed.toFixed(3)} s, ` +
          `last completion ${finished.toFixed(3)} s after the database accepted connections`,
      );
      expect(handler).toBeLessThanOrEqual(BOUND_S);
      expect(claimed).toBeLessThanOrEqual(BOUND_S);
      expect(finished).toBeLessThanOrEqual(BOUND_S);
    } finally {
      worker.stop();
      await running;
      await servicePool.end();
    }
  }, 120_000);
});
