// The TypeScript client in the failover test (test_failover.py): appends messages to THREAD
// through `poolFromConnString(URL)` on the formation's multi-host URL (target_session_attrs=
// read-write: each new connection tries the hosts in order and keeps the writable one), each call
// tried again with the same idempotency key until it is acknowledged, as an application does (the
// client itself does not retry). Prints each acknowledged message as a JSON line [thread, i]; each
// failed try on stderr. Runs until SIGTERM.
// `node ts_appender.mjs ROOT` (ROOT: the repository, whose typescript/dist it uses).
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const { Client, poolFromConnString } = await import(pathToFileURL(`${root}/typescript/dist/index.js`).href);

const pool = poolFromConnString(process.env.URL, { max: 2, connectionTimeoutMillis: 3000 });
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
