// Answers lost on claim, complete and enqueue (issue 41, item 3), from TypeScript: the connection
// breaks after the server committed and before the answer arrives (a proxy holds the answer back
// and closes the connection once the commit is done). The client runs these three calls again on
// another connection of its pool, and they answer as the first try would have: the same jobs under
// the same tokens (a claim carries a request id), the completed job (a completion under the same
// token), one job (an enqueue gets a key from the client). Before, the caller got the error, and a
// retry of its own claimed other jobs, was refused (AS006) or enqueued a second job.
import { randomUUID } from "node:crypto";
import net from "node:net";
import pg from "pg";
import { Client } from "../src/index.js";
import { connectionConfig, pool } from "./db.js";

// ReadyForQuery, idle: what the server sends once an autocommit statement has committed.
const READY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

class AnswerDrop {
  private server: net.Server;
  private marker: Buffer | null = null;
  private sockets = new Set<net.Socket>();
  dropped = false;
  port = 0;

  constructor() {
    this.server = net.createServer((client) => this.serve(client));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Drop the answer of the next statement whose text holds `marker`. */
  arm(marker: string): void {
    this.marker = Buffer.from(marker);
    this.dropped = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(client: net.Socket): void {
    const host = process.env.PGHOST ?? "/tmp";
    const port = Number(process.env.PGPORT ?? 5432);
    const upstream = host.startsWith("/") ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
    this.sockets.add(client).add(upstream);
    let doomed = false;
    let held = Buffer.alloc(0);
    client.on("data", (data) => {
      if (this.marker !== null && data.includes(this.marker)) {
        this.marker = null;
        doomed = true;
      }
      upstream.write(data);
    });
    upstream.on("data", (data) => {
      if (!doomed) {
        client.write(data);
        return;
      }
      held = Buffer.concat([held, data]);
      if (held.subarray(held.length - READY_IDLE.length).equals(READY_IDLE)) {
        this.dropped = true;
        client.destroy();
        upstream.destroy();
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  }
}

let proxy: AnswerDrop;
let proxied: pg.Pool;
let admin: pg.Pool;
let service: Client;

beforeAll(async () => {
  proxy = new AnswerDrop();
  await proxy.listen();
  proxied = new pg.Pool({ ...connectionConfig("app_service"), host: "127.0.0.1", port: proxy.port, max: 2 });
  proxied.on("error", () => {}); // an idle connection the proxy closed: the pool drops it
  admin = pool();
  service = new Client(proxied);
});

afterAll(async () => {
  await proxied.end();
  await admin.end();
  await proxy.close();
});

async function jobs(queue: string): Promise<{ job_id: number; status: string; fencing_token: number }[]> {
  const { rows } = await admin.query(
    "select job_id::int, status, fencing_token::int from ai.agent_jobs where queue = $1 order by job_id",
    [queue],
  );
  return rows;
}

async function threads(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) ids.push((await service.createSession(`ts-lost-${randomUUID()}`)).thread_id);
  return ids;
}

test("an enqueue whose answer was lost is retried and makes one job", async () => {
  const queue = `ts-lost-${randomUUID()}`;
  const [thread] = await threads(1);
  proxy.arm("ai.enqueue_job(");
  const job = await service.enqueueJob(thread!, { n: 1 }, { queue });
  expect(proxy.dropped).toBe(true);
  expect((await jobs(queue)).map((j) => j.job_id)).toEqual([Number(job.job_id)]);
});

test("a claim whose answer was lost answers with the same jobs under the same tokens", async () => {
  const queue = `ts-lost-${randomUUID()}`;
  for (const thread of await threads(3)) await service.enqueueJob(thread, {}, { queue });
  proxy.arm("ai.claim_jobs(");
  const claimed = await service.claimJobs("ts-w-lost", 60, queue, 2);
  expect(proxy.dropped).toBe(true);
  const held = (await jobs(queue)).filter((j) => j.status === "IN_PROGRESS").map((j) => [j.job_id, j.fencing_token]);
  expect(claimed.map((j) => [Number(j.job_id), Number(j.fencing_token)]).sort()).toEqual(held.sort());
  expect(held).toHaveLength(2);
});

test("a completion whose answer was lost is retried and answers with the completed job", async () => {
  const queue = `ts-lost-${randomUUID()}`;
  const [thread] = await threads(1);
  await service.enqueueJob(thread!, {}, { queue });
  const [job] = await service.claimJobs("ts-w-lost", 60, queue, 1);
  proxy.arm("ai.complete_job(");
  const done = await service.completeJob(Number(job!.job_id), Number(job!.fencing_token), { n: 1 });
  expect(proxy.dropped).toBe(true);
  expect(done.status).toBe("COMPLETED");
  expect(done.result).toEqual({ n: 1 });
  expect((await jobs(queue)).map((j) => j.status)).toEqual(["COMPLETED"]);
});
