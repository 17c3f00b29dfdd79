// The TypeScript client in the failover test (test_failover.py): appends messages to THREAD
// through a pg.Pool on PGHOST:PGPORT (the test's endpoint that leads to the primary, as a managed
// service's endpoint or HAProxy does: node-postgres takes one host), each call tried again with
// the same idempotency key until it is acknowledged, as an application does. Prints each
// acknowledged message as a JSON line [thread, i]; each failed try on stderr. Runs until SIGTERM.
// `node ts_appender.mjs ROOT` (ROOT: the repository, whose typescript/dist and node_modules it uses).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const require = createRequire(`${root}/typescript/package.json`);
const pg = require("pg");
const { Client } = await import(pathToFileURL(`${root}/typescript/dist/index.js`).href);

const pool = new pg.Pool({ max: 2, connectionTimeoutMillis: 3000 });
pool.on("error", () => {}); // an idle connection the failover ended: the pool drops it
const client = new Client(pool);
const thread = process.env.THREAD;
let stop = false;
process.on("SIGTERM", () => {
  stop = true;
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function retrying(call) {
  while (!stop) {
    try {
      return await call();
    } catch (error) {
      console.error(`try failed: ${error}`);
      await sleep(500);
    }
  }
  return null;
}

await retrying(() => client.createSession(thread));
for (let i = 0; !stop; i++) {
  const appended = await retrying(() => client.appendMessage(thread, "user", { i }, { idempotencyKey: `m${i}` }));
  if (appended !== null) console.log(JSON.stringify([thread, i]));
  await sleep(50);
}
await pool.end();
