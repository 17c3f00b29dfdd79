// A Client over a pool with a retry policy (issue 31, item 3), as tests/python/test_retry.py and
// test_failover_reconnect.py: a write refused as read-only (25006: a standby, or a node the
// failover has not made writable yet) wrote nothing, so it is tried again, on a new connection,
// until the database is writable, and lands once; a read whose idle connection the server ended
// is tried again on another. The read-only window is default_transaction_read_only set on the
// test database (new sessions only), reset while the client retries.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { Client, IDEMPOTENT, OutcomeUnknown, READS } from "../src/index.js";
import { TS_DB, connectionConfig, pool, waitFor } from "./db.js";

const run = promisify(execFile);
const root = process.env.AGENT_STATE_ROOT ?? path.resolve(process.cwd(), "..");
const vpy = process.env.AGENT_STATE_VPY ?? path.join(root, ".venv", "bin", "python");

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(connectionConfig(undefined, "postgres")); // not the test database: its new sessions may be read-only
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe("a client with a retry policy", () => {
  it("classifies calls as Python does", () => {
    expect(IDEMPOTENT.get_session!([])).toBe(true);
    expect(IDEMPOTENT.create_session!([null, "{}"])).toBe(false);
    expect(IDEMPOTENT.create_session!(["t", "{}"])).toBe(true);
    expect(IDEMPOTENT.record_event).toBeUndefined();
    expect(new OutcomeUnknown("x")).toBeInstanceOf(Error);
  });

  it("retries and counts as reads every function this client calls exactly as Python's agent_state.retry does", async () => {
    const called = new Set(
      [...readFileSync(path.join(root, "typescript", "src", "client.ts"), "utf8").matchAll(/\bai\.([a-z][a-z_0-9]*)\(/g)].map((m) => m[1]!),
    );
    const script = "import json; from agent_state.retry import IDEMPOTENT, READS; print(json.dumps([sorted(IDEMPOTENT), sorted(READS)]))";
    const { stdout } = await run(vpy, ["-c", script], { env: { ...process.env, PYTHONPATH: path.join(root, "python") } });
    const [idempotent, reads] = JSON.parse(stdout) as [string[], string[]];
    const TS_ONLY_READS = ["current_owner", "list_jobs"]; // reads Python's client does not list (it calls them elsewhere or not at all)
    const ours = (names: Iterable<string>) => [...names].filter((n) => called.has(n)).sort();
    expect(ours(Object.keys(IDEMPOTENT))).toEqual(ours([...idempotent, ...TS_ONLY_READS]));
    expect(ours(READS)).toEqual(ours([...reads, ...TS_ONLY_READS]));
  });

  it("tries a write refused as read-only again until the database is writable, and writes it once", async () => {
    const tenantPool = pool("tenant_a", 2);
    tenantPool.on("error", () => undefined);
    let connects = 0;
    tenantPool.on("connect", () => (connects += 1));
    const client = new Client(tenantPool, { retry: { timeoutMs: 30_000 } });
    const thread = (await client.createSession(`ro-${randomUUID()}`)).thread_id;
    await admin((c) => c.query(`alter database "${TS_DB}" set default_transaction_read_only = on`));
    let writable = 0;
    try {
      // the pool's idle connection predates the setting: end it, so every new one is read-only
      await admin((c) =>
        c.query("select pg_terminate_backend(pid) from pg_stat_activity where usename = 'tenant_a' and datname = $1", [TS_DB]),
      );
      const before = connects;
      const writing = client.recordEvent(thread, "after_failover", { n: 1 }).then(() => performance.now());
      writing.catch(() => undefined);
      await waitFor(async () => (connects - before >= 3 ? true : undefined), 30_000, "read-only tries on new connections");
      await admin((c) => c.query(`alter database "${TS_DB}" reset default_transaction_read_only`));
      writable = performance.now();
      const acknowledged = await writing;
      console.log(`[TS read-only window] first acknowledged write ${((acknowledged - writable) / 1000).toFixed(3)} s after writable`);
    } finally {
      if (!writable) await admin((c) => c.query(`alter database "${TS_DB}" reset default_transaction_read_only`));
    }
    const events = (await client.getEvents(thread)).filter((e) => e.kind === "after_failover");
    expect(events).toHaveLength(1);
    await tenantPool.end();
  });

  it("tries a read again after the server ended its connection", async () => {
    const tenantPool = pool("tenant_a", 2);
    tenantPool.on("error", () => undefined);
    const client = new Client(tenantPool, { retry: {} });
    const thread = (await client.createSession(`rd-${randomUUID()}`)).thread_id;
    await admin((c) =>
      c.query("select pg_terminate_backend(pid) from pg_stat_activity where usename = 'tenant_a' and datname = $1", [TS_DB]),
    );
    expect((await client.getSession(thread)).thread_id).toBe(thread);
    await tenantPool.end();
  });
});
