// A multi-host URL follows the primary (issue 31, item 2), as tests/python/test_failover_reconnect.py:
// node-postgres reads one host, so `poolFromConnString` (and `AgentStateSaver.fromConnString`)
// tries the hosts of the URL in order for each new connection. Two TCP proxies of the test's own
// stand for two nodes in front of the private server; the first is stopped (the old primary's
// connections drop and its port refuses) and the next calls must reach the second. A host whose
// sessions are read-only is skipped with target_session_attrs=read-write.
import net from "node:net";
import { randomUUID } from "node:crypto";
import { Client, connectionTargets, poolFromConnString } from "../src/index.js";
import { AgentStateSaver } from "../src/langgraph.js";
import { TS_DB, connectionConfig } from "./db.js";

class Proxy {
  readonly server: net.Server;
  readonly sockets = new Set<net.Socket>();
  connections = 0;

  constructor() {
    const { host, port } = connectionConfig();
    const target = host?.startsWith("/") ? { path: `${host}/.s.PGSQL.${port}` } : { host, port: Number(port) };
    this.server = net.createServer((client) => {
      this.connections += 1;
      const upstream = net.connect(target as net.NetConnectOpts);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, "127.0.0.1", () => resolve((this.server.address() as net.AddressInfo).port)));
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("a multi-host URL", () => {
  it("names each host as a URL of its own", () => {
    expect(connectionTargets("postgresql://u@a:1,b:2/db?target_session_attrs=read-write&application_name=x")).toEqual({
      targets: ["postgresql://u@a:1/db?application_name=x", "postgresql://u@b:2/db?application_name=x"],
      readWrite: true,
    });
    expect(connectionTargets("postgresql://a/db")).toEqual({ targets: ["postgresql://a/db"], readWrite: false });
  });

  it("reaches the next host when the first one dies, for a pool and a saver", async () => {
    const first = new Proxy();
    const second = new Proxy();
    const [a, b] = [await first.listen(), await second.listen()];
    const url = `postgresql://app_service@127.0.0.1:${a},127.0.0.1:${b}/${TS_DB}?target_session_attrs=read-write`;
    const pool = poolFromConnString(url, { max: 2 });
    const saver = AgentStateSaver.fromConnString(url, { max: 2 });
    try {
      const client = new Client(pool);
      const thread = (await client.createSession(`mh-${randomUUID()}`)).thread_id;
      const config = { configurable: { thread_id: thread, checkpoint_ns: "" } };
      expect(await saver.getTuple(config)).toBeUndefined();
      expect(first.connections).toBeGreaterThan(0);
      expect(second.connections).toBe(0);
      await first.stop();
      // the pool's connection through the first host broke: the call fails or is made on a new one
      await client.now().catch(() => undefined);
      await saver.getTuple(config).catch(() => undefined);
      expect((await client.getSession(thread)).thread_id).toBe(thread);
      expect(await saver.getTuple(config)).toBeUndefined();
      expect(second.connections).toBeGreaterThan(0);
    } finally {
      await Promise.all([pool.end(), saver.end()]);
      await second.stop();
    }
  });

  it("refuses a host whose sessions are read-only when the URL asks for read-write", async () => {
    const first = new Proxy();
    const [a] = [await first.listen()];
    const { host, port } = connectionConfig();
    // the same server twice: through the proxy as a role whose sessions are read-only, then directly
    const url =
      `postgresql://app_service@127.0.0.1:${a},${encodeURIComponent(host ?? "")}:${port}/${TS_DB}` +
      `?target_session_attrs=read-write&options=${encodeURIComponent("-c default_transaction_read_only=on")}`;
    // (the options apply to both hosts: every one is read-only, so none is kept)
    const pool = poolFromConnString(url, { max: 1 });
    try {
      await expect(new Client(pool).now()).rejects.toThrow(/read-only/);
    } finally {
      await pool.end();
      await first.stop();
    }
  });
});
