// The client, the saver and a worker through a real PgBouncer in transaction pooling (the private
// one `make test-typescript` starts: AGENT_STATE_TS_POOLER_HOST/PORT), six client connections over
// its pool of four server connections (scripts/pgbouncer.sh), so consecutive statements of one
// client connection land on different server sessions: nothing may depend on a prepared statement
// (node-postgres's unnamed statements only) or on session state.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Client, Worker } from "../src/index.js";
import { AgentStateSaver } from "../src/langgraph.js";
import { TS_DB } from "./db.js";

const host = process.env.AGENT_STATE_TS_POOLER_HOST;
const port = process.env.AGENT_STATE_TS_POOLER_PORT;

function pooled(user: string, max: number): pg.Pool {
  return new pg.Pool({ host, port: Number(port), user, database: TS_DB, max });
}

describe.skipIf(!host)("through PgBouncer in transaction pooling", () => {
  it("runs every kind of call, concurrently, from many client connections", async () => {
    const tenantPool = pooled("tenant_a", 6);
    const servicePool = pooled("app_service", 2);
    try {
      const tenant = new Client(tenantPool);
      const service = new Client(servicePool);
      const threads = await Promise.all(Array.from({ length: 6 }, () => tenant.createSession()));
      await Promise.all(
        threads.map(async ({ thread_id }) => {
          for (let turn = 1; turn <= 10; turn += 1) {
            await tenant.appendMessage(thread_id, "user", { turn }, { turn });
          }
          expect((await tenant.getMessages(thread_id)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        }),
      );
      const made = await service.actingAs("tenant_a", (alice) => alice.createSession(`pooled-${randomUUID()}`));
      expect(made.owner).toBe("tenant_a");

      const saver = new AgentStateSaver(tenant);
      const { emptyCheckpoint, uuid6 } = await import("@langchain/langgraph-checkpoint");
      const config = { configurable: { thread_id: threads[0]!.thread_id, checkpoint_ns: "" } };
      const version = saver.getNextVersion(undefined);
      const checkpoint = { ...emptyCheckpoint(), id: uuid6(0), channel_values: { a: [1] }, channel_versions: { a: version } };
      const saved = await saver.put(config, checkpoint, { source: "input", step: -1, parents: {} }, { a: version });
      expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual({ a: [1] });

      const queue = `pooled-${randomUUID().slice(0, 8)}`;
      for (const { thread_id } of threads) await tenant.enqueueJob(thread_id, {}, { queue });
      const stats = await new Worker(service, async (job, ctx) => {
        await ctx.appendMessage("assistant", { done: job.job_id }, { idempotencyKey: "done" });
        return { ok: true };
      }, { queue, concurrency: 3, pollMs: 20 }).run({ drain: true });
      expect(stats.completed).toBe(threads.length);
    } finally {
      await Promise.all([tenantPool.end(), servicePool.end()]);
    }
  });
});
