// The client's keys (issue 38 item 5; tests/python/test_job_keys_client.py for TypeScript):
// enqueueJob({ key }), enqueueJobs with NewJob.key, the operator's setJobKey and everyone's
// jobKeyStatus. A tenant may not call setJobKey (no EXECUTE: 42501, passed through), a service
// acting for one gets PermissionDenied (AS007), and a tenant sees only its own keys.
import { randomUUID } from "node:crypto";
import { InvalidArgument, PermissionDenied } from "../src/index.js";
import type { JobKeyStatus } from "../src/index.js";
import { roleClients } from "./db.js";

// clients over pools of the test roles (a pool connects on its first call)
const { a, b, service: ops, end } = roleClients();
afterAll(end);

describe("job keys", () => {
  it("a tenant keys its jobs and reads only its own keys; an operator sets a key's limits and reads every key", async () => {
    const queue = `keys-${randomUUID().slice(0, 8)}`;
    const threads = [0, 1, 2].map(() => `ka-${randomUUID()}`);
    for (const t of threads) await a.createSession(t);
    expect((await a.enqueueJob(threads[0]!, {}, { queue })).key).toBe("@tenant_a");
    const jobs = await a.enqueueJobs([{ thread_id: threads[1]!, key: "openai" }, { thread_id: threads[2]! }], { queue });
    expect(jobs.map((j) => j.key)).toEqual(["openai", "@tenant_a"]);
    await expect(a.enqueueJob(threads[0]!, {}, { queue, key: "@tenant_b" })).rejects.toBeInstanceOf(InvalidArgument);
    // no EXECUTE for tenants: node-postgres's error, not one of ours
    await expect(a.setJobKey(queue, "@tenant_a", { maxInFlight: 100 })).rejects.toMatchObject({ code: "42501" });

    const t = `kb-${randomUUID()}`;
    await b.createSession(t);
    await b.enqueueJob(t, {}, { queue, key: "openai" });
    expect((await b.jobKeyStatus(queue)).map((k) => [k.key, k.backlog])).toEqual([["openai", 1]]);

    // a service acting for a tenant is refused: the limits are the operator's
    await expect(ops.actingAs("tenant_a", (alice) => alice.setJobKey(queue, "@tenant_a", { maxInFlight: 100 }))).rejects.toBeInstanceOf(
      PermissionDenied,
    );
    await ops.setJobKey(queue, "openai", { maxInFlight: 2, ratePerMinute: 60 });
    const keys = new Map((await ops.jobKeyStatus(queue)).map((k) => [k.key, k]));
    expect(keys.get("openai")).toMatchObject({ backlog: 2, max_in_flight: 2, rate_per_minute: 60, burst: 1, tokens: 1 });
    expect(keys.get("@tenant_a")).toMatchObject({ backlog: 2, weight: 1, max_in_flight: null, tokens: null });
    // a tenant never sees the bucket
    expect((await b.jobKeyStatus(queue))[0]).toMatchObject({ key: "openai", rate_per_minute: 60, tokens: null });
  });

  it("sets a weight and a concurrency limit, reads them back typed, and the defaults clear the key", async () => {
    const queue = `akeys-${randomUUID().slice(0, 8)}`;
    await ops.setJobKey(queue, "anthropic", { weight: 3, maxInFlight: 4 });
    const rows: JobKeyStatus[] = await ops.jobKeyStatus(queue);
    expect(rows).toEqual([
      {
        queue,
        key: "anthropic",
        weight: 3,
        max_in_flight: 4,
        in_flight: 0,
        rate_per_minute: null,
        burst: null,
        tokens: null,
        backlog: 0,
        due: 0,
      },
    ]);
    await ops.setJobKey(queue, "anthropic"); // the defaults (weight 1, no limits) clear it
    expect(await ops.jobKeyStatus(queue)).toEqual([]);
  });

  it("pages through the keys in (queue, key) order and refuses a bad argument", async () => {
    const queue = `pkeys-${randomUUID().slice(0, 8)}`;
    for (const key of ["c", "a", "b"]) await ops.setJobKey(queue, key, { weight: 2 });
    const first = await ops.jobKeyStatus(queue, { maxRows: 2 });
    expect(first.map((k) => k.key)).toEqual(["a", "b"]);
    const next = await ops.jobKeyStatus(queue, { maxRows: 2, afterQueue: queue, afterKey: "b" });
    expect(next.map((k) => k.key)).toEqual(["c"]);
    await expect(ops.setJobKey(queue, "a", { weight: 0 })).rejects.toBeInstanceOf(InvalidArgument);
    await expect(ops.setJobKey(queue, "a", { burst: 3 })).rejects.toBeInstanceOf(InvalidArgument); // a burst needs a rate
    await expect(ops.jobKeyStatus(queue, { maxRows: 0 })).rejects.toBeInstanceOf(InvalidArgument);
  });
});
