// A deploy under a live client (tests/python/test_upgrade_under_load.py, for the TypeScript
// client). The release is deployed with sqitch, then HEAD over it with scripts/sqitch.sh, the
// documented way; job_keys adds columns to ai.agent_jobs, which changes the row type the queue's
// functions return. A call planned before that commits and run after it (`select * from
// ai.get_job($1)` is planned with the old row type, then waits inside the function for the lock
// the deploy holds on ai.agent_jobs) fails whole: 42804 "function return row and query-specified
// return row do not match"; a set-returning claim whose connection ran it before the deploy fails
// with 42804 "wrong record type supplied in RETURN NEXT" (PL/pgSQL's state cached on the
// connection), and a prepared statement with 0A000 "cached plan must not change result type"
// (which the Python client met).
// Under a live fleet a few calls per deploy meet it (two workers looping over unprepared calls
// through the whole deploy: 6 failed calls in 1,042 cycles). The client runs DISCARD PLANS and
// sends the call again, at most three times, never inside the caller's transaction (there the
// error reaches the caller), as the Python client does. The test makes the window certain: a
// transaction holds ai.agent_jobs, the deploy of job_keys queues behind it, the calls queue behind
// the deploy; the transaction ends, the deploy commits, the calls run.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { Client } from "../src/index.js";
import { SUPERUSER, TS_DB, connectionConfig, waitFor } from "./db.js";

const run = promisify(execFile);
const root = process.env.AGENT_STATE_ROOT ?? path.resolve(process.cwd(), "..");
const DB = `${TS_DB}_replan`;
const OWNER = process.env.AGENT_STATE_DEPLOY_USER ?? "agent_state_owner";

/** The last release tag of sqitch.plan (`@v0.1.0`). */
function releaseTag(): string {
  const tags = [...readFileSync(path.join(root, "sqitch.plan"), "utf8").matchAll(/^(@\S+)/gm)].map((m) => m[1]!);
  if (tags.length === 0) throw new Error("sqitch.plan has no release tag");
  return tags[tags.length - 1]!;
}

/** The change planned right before `change` in sqitch.plan. */
function changeBefore(change: string): string {
  const names = readFileSync(path.join(root, "sqitch.plan"), "utf8")
    .split("\n")
    .filter((line) => /^[a-z]/.test(line))
    .map((line) => line.split(/\s/)[0]!);
  const at = names.lastIndexOf(change);
  if (at < 1) throw new Error(`sqitch.plan has no change before ${change}`);
  return names[at - 1]!;
}

/** scripts/sqitch.sh deploy as the schema owner, to `to` (HEAD when omitted). */
async function deploy(to?: string, lockTimeout = "5s"): Promise<void> {
  const url = `postgresql://${OWNER}@/${DB}?host=${encodeURIComponent(process.env.PGHOST ?? "")}&port=${process.env.PGPORT ?? 5432}`;
  await run(path.join(root, "scripts", "sqitch.sh"), [url, "--quiet", "deploy", "--verify", ...(to ? ["--to", to] : [])], {
    cwd: root,
    timeout: 120_000,
    env: { ...process.env, AGENT_STATE_LOCK_TIMEOUT: lockTimeout },
  });
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(connectionConfig(undefined, "postgres"));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const opened: { end(): Promise<void> }[] = [];
async function connection(user: string): Promise<pg.Client> {
  const c = new pg.Client(connectionConfig(user, DB));
  await c.connect();
  opened.push(c);
  return c;
}
function poolOf(user: string): pg.Pool {
  const p = new pg.Pool({ ...connectionConfig(user, DB), max: 1 }); // one connection: it is the one that cached the plans
  opened.push(p);
  return p;
}

/** One job through the queue as the workers of test_upgrade_under_load do: every error kept. */
async function cycle(tenant: Client, service: Client, queue: string, errors: string[]): Promise<void> {
  const step = async <T>(what: string, call: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await call();
    } catch (error) {
      errors.push(`${what}: ${(error as { code?: string }).code ?? ""} ${String((error as Error).message)}`);
      return undefined;
    }
  };
  const threadId = `replan-${randomUUID()}`;
  await step("createSession", () => tenant.createSession(threadId));
  await step("enqueueJob", () => tenant.enqueueJob(threadId, { n: 1 }, { queue }));
  await step("queueStats", () => service.queueStats(queue));
  const job = await step("claimJob", () => service.claimJob("replan-w", { queue, leaseSeconds: 300 }));
  if (!job) {
    errors.push("claimJob: no job");
    return;
  }
  await step("getJob", () => service.getJob(job.job_id));
  await step("renewLease", () => service.renewLease(job.job_id, job.fencing_token, 300));
  await step("fencedStream", async () => {
    const fence = { jobId: job.job_id, fencingToken: job.fencing_token };
    await service.openStream(threadId, "s", fence);
    await service.appendStreamChunks(threadId, "s", 1, ["a", "b"], fence);
    return service.finishStream(threadId, "s", fence);
  });
  await step("appendMessages", () => service.appendMessages(threadId, [{ role: "assistant", content: { n: 1 } }]));
  await step("completeJob", () => service.completeJob(job.job_id, job.fencing_token, { ok: true }));
  await step("jobAttempts", () => tenant.jobAttempts(job.job_id));
  await step("getMessages", () => tenant.getMessages(threadId));
}

/** Backends of this database waiting for a lock, of the given roles. */
async function waitingFor(users: string[]): Promise<number> {
  return admin(async (c) => {
    const { rows } = await c.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = $1 and usename = any($2) and wait_event_type = 'Lock'",
      [DB, users],
    );
    return rows[0]!.n;
  });
}

beforeAll(async () => {
  await admin(async (c) => {
    await c.query(`drop database if exists "${DB}" with (force)`);
    await c.query(`create database "${DB}" owner "${OWNER}"`);
  });
  await deploy(releaseTag());
  await deploy(changeBefore("job_keys"));
}, 180_000);

afterAll(async () => {
  for (const c of opened) await c.end().catch(() => undefined);
  await admin((c) => c.query(`drop database if exists "${DB}" with (force)`));
});

describe("a deploy under a live client", () => {
  it("sends again, after DISCARD PLANS, a call planned before a deploy changed the row type it returns; not in the caller's transaction", async () => {
    const queue = `replan-${randomUUID().slice(0, 8)}`;
    const tenant = new Client(await connection("tenant_a"));
    const service = new Client(await connection("app_service"));
    const pooledTenant = new Client(poolOf("tenant_a"));
    const pooledService = new Client(poolOf("app_service"));
    const retrying = new Client(poolOf("tenant_a"), { retry: {} });
    const inTransaction = await connection("tenant_a");
    // live clients: every call below has run on its connection before the deploy
    const warm: string[] = [];
    for (const [t, s] of [[tenant, service], [pooledTenant, pooledService], [retrying, service]] as const) {
      await cycle(t, s, queue, warm);
    }
    await cycle(new Client(inTransaction), service, queue, warm);
    expect(warm).toEqual([]);
    const threadId = `replan-${randomUUID()}`;
    await tenant.createSession(threadId);
    const jobs = [];
    for (let i = 0; i < 3; i += 1) jobs.push(await tenant.enqueueJob(threadId, { i }, { queue: `${queue}-held` }));
    const claimed = await service.claimJob("replan-held", { queue: `${queue}-held`, leaseSeconds: 300 });
    const claimer = new Client(await connection("app_service"));
    expect(await claimer.claimJob("replan-w", { queue: `${queue}-claim` })).toBeNull(); // its connection has run the claim
    const other = `replan-${randomUUID()}`; // a thread of its own: a claim skips a thread with a job running
    await tenant.createSession(other);
    const claimable = await tenant.enqueueJob(other, {}, { queue: `${queue}-claim` });

    const holder = await connection(SUPERUSER);
    await holder.query("begin");
    await holder.query("lock table ai.agent_jobs in access share mode");
    const deploying = deploy("job_keys", "60s");
    const blocked = async () => ((await waitingFor([OWNER])) > 0 ? true : undefined);
    await waitFor(blocked, 30_000, "the deploy to wait for ai.agent_jobs");
    await inTransaction.query("begin");
    const calls = {
      single: tenant.getJob(jobs[0]!.job_id).then((j) => j.job_id, (e: unknown) => e),
      singleService: service.completeJob(claimed!.job_id, claimed!.fencing_token, { ok: 1 }).then((j) => j.status, (e: unknown) => e),
      pooled: pooledTenant.enqueueJob(threadId, {}, { queue }).then((j) => j.queue, (e: unknown) => e),
      pooledService: pooledService.cancelJob(jobs[1]!.job_id).then((j) => j.status, (e: unknown) => e),
      retrying: retrying.getJob(jobs[2]!.job_id).then((j) => j.job_id, (e: unknown) => e),
      inTransaction: new Client(inTransaction).getJob(jobs[2]!.job_id).then((j) => j.job_id, (e: unknown) => e),
      // a set-returning function: 42804 "wrong record type supplied in RETURN NEXT"
      claim: claimer.claimJob("replan-w", { queue: `${queue}-claim` }).then((j) => j?.job_id, (e: unknown) => e),
    };
    const queued = async () => ((await waitingFor(["tenant_a", "app_service"])) >= 7 ? true : undefined);
    await waitFor(queued, 30_000, "every call to wait behind the deploy");
    await holder.query("commit");
    await deploying;
    const settled = Object.fromEntries(await Promise.all(Object.entries(calls).map(async ([k, v]) => [k, await v])));
    const { inTransaction: refused, ...rest } = settled;
    expect(rest).toEqual({
      single: jobs[0]!.job_id,
      singleService: "COMPLETED",
      pooled: queue,
      pooledService: "CANCELLED",
      retrying: jobs[2]!.job_id,
      claim: claimable.job_id,
    });
    // in the caller's transaction the error reaches the caller (the transaction is aborted)
    expect(refused).toMatchObject({ code: "42804" });
    expect(inTransaction.getTransactionStatus()).toBe("E");
    await inTransaction.query("rollback");

    await deploy(); // the rest of HEAD: every call runs on the same live connections
    const after: string[] = [];
    for (const [t, s] of [[tenant, service], [pooledTenant, pooledService], [retrying, service]] as const) {
      await cycle(t, s, `${queue}-after`, after);
    }
    expect(after).toEqual([]);
  }, 120_000);
});
