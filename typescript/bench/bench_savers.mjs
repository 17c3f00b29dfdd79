// `bench/typescript.sh` (make bench) runs this. put and getTuple (latest) of AgentStateSaver against LangGraph.js's PostgresSaver, over one
// connection and 8 concurrent ones (8 graph threads, each its own thread_id, one saver over a pool
// of 8). The checkpoint is the Python bench's (bench/checkpoints/bench_checkpoints.py): a
// `messages` channel of 20 messages of 500 characters (different per step), an int, a short str
// and a small dict, every channel at a new version each step. Before each point both sides'
// tables are vacuumed and analyzed. Median of BENCH_REPEATS × BENCH_SECONDS per point.
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { AgentStateSaver } from "../dist/langgraph.js";

const url = process.env.BENCH_URL;
const tenant = process.env.TENANT;
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const SCHEMA = "bench_langgraph_js";

const WORDS = "the agent plans a trip to lisbon and books a table near the river before the museum opens".split(" ");
function text(seed, size = 500) {
  let out = "";
  let i = seed;
  while (out.length < size) {
    out += WORDS[i % WORDS.length] + " ";
    i = (i * 7 + 3) % 1009;
  }
  return out.slice(0, size);
}

function state(step) {
  return {
    messages: Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: text(step * 20 + i) })),
    counter: step,
    label: `step-${step}`,
    info: { step, ok: true },
  };
}

class Thread {
  constructor(saver, threadId) {
    this.saver = saver;
    this.config = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
    this.step = 0;
    this.versions = {};
  }
  async put() {
    const values = state(this.step);
    const newVersions = {};
    for (const k of Object.keys(values)) newVersions[k] = this.saver.getNextVersion(this.versions[k]);
    this.versions = { ...this.versions, ...newVersions };
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: { ...this.versions } };
    const metadata = { source: "loop", step: this.step, parents: {} };
    this.config = await this.saver.put(this.config, checkpoint, metadata, newVersions);
    this.step += 1;
  }
  async getTuple() {
    const found = await this.saver.getTuple({ configurable: { thread_id: this.config.configurable.thread_id, checkpoint_ns: "" } });
    if (!found) throw new Error("no checkpoint");
  }
}

/** The URL as another role: the URL's own user dropped, ?user= added (as bench/common.bash's url_with). */
function withUser(connectionString, user) {
  const bare = connectionString.replace(/^(postgres(?:ql)?:\/\/)[^@/?]*@/, "$1");
  return `${bare}${bare.includes("?") ? "&" : "?"}user=${encodeURIComponent(user)}`;
}

async function settle(admin) {
  await admin.query(`vacuum analyze ai.checkpoints, ai.checkpoint_blobs, ai.checkpoint_writes,
    ${SCHEMA}.checkpoints, ${SCHEMA}.checkpoint_blobs, ${SCHEMA}.checkpoint_writes`);
}

function makeSaver(kind, connections) {
  if (kind === "PostgresSaver") {
    const pool = new pg.Pool({ connectionString: url, max: connections });
    return { saver: new PostgresSaver(pool, undefined, { schema: SCHEMA }), pool };
  }
  const pool = new pg.Pool({ connectionString: withUser(url, tenant), max: connections });
  return { saver: new AgentStateSaver(pool), pool };
}

async function point(kind, connections, operation, round) {
  const { saver, pool } = makeSaver(kind, connections);
  try {
    const threads = Array.from({ length: connections }, (_, i) => new Thread(saver, `${kind}-${operation}-${connections}-${round}-${i}-${Date.now()}`));
    for (const t of threads) await t.put(); // something to read
    let count = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      threads.map(async (t) => {
        while (performance.now() < deadline) {
          await (operation === "put" ? t.put() : t.getTuple());
          count += 1;
        }
      }),
    );
    return count / ((performance.now() - started) / 1000);
  } finally {
    await pool.end();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const setupPool = new pg.Pool({ connectionString: url, max: 1 });
await new PostgresSaver(setupPool, undefined, { schema: SCHEMA }).setup();
await setupPool.end();
// the tenant reaches the pool's URL too: check once that it is who the rows will belong to
const probe = new pg.Client({ connectionString: withUser(url, tenant) });
await probe.connect();
const who = (await probe.query("select current_user as u")).rows[0].u;
await probe.end();
if (who !== tenant) throw new Error(`expected to connect as ${tenant}, got ${who}`);

const rows = [];
for (const connections of [1, 8]) {
  for (const operation of ["put", "getTuple"]) {
    // the two sides alternate, repeat by repeat, so that a change in the machine's load falls on both
    const runs = { PostgresSaver: [], AgentStateSaver: [] };
    for (let r = 0; r < repeats; r += 1) {
      for (const kind of r % 2 === 0 ? ["PostgresSaver", "AgentStateSaver"] : ["AgentStateSaver", "PostgresSaver"]) {
        await settle(admin);
        runs[kind].push(await point(kind, connections, operation, r));
      }
    }
    rows.push({ operation, connections, PostgresSaver: median(runs.PostgresSaver), AgentStateSaver: median(runs.AgentStateSaver) });
  }
}
await admin.end();

const node = process.versions.node;
const pgVersion = (await (async () => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const v = (await c.query("show server_version")).rows[0].server_version;
  await c.end();
  return v;
})());
const load = (await import("node:os")).loadavg().map((x) => x.toFixed(1)).join(" ");
console.log(`TypeScript savers, node ${node}, PostgreSQL ${pgVersion}, median of ${repeats} × ${seconds} s per point, load average ${load}`);
console.log("| operations/s | connections | PostgresSaver (LangGraph.js) | AgentStateSaver (TS, RLS on) | ratio |");
console.log("|---|---:|---:|---:|---:|");
for (const r of rows) {
  const ratio = r.AgentStateSaver / r.PostgresSaver;
  console.log(`| ${r.operation} | ${r.connections} | ${Math.round(r.PostgresSaver).toLocaleString("en")} | ${Math.round(r.AgentStateSaver).toLocaleString("en")} | ${ratio.toFixed(2)}× |`);
}
