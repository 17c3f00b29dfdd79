/**
 * The database the TypeScript tests use: a copy of the deployed test database (`make test-db`
 * builds agent_state_test; test/global-setup.ts copies it to AGENT_STATE_TS_DB), reached with
 * the libpq environment `make` sets (PGHOST, PGPORT: the private cluster's unix socket).
 * The tests connect as the login roles of tests/pgtap/fixtures/setup.sql: tenant_a, tenant_b
 * (members of ai_user) and app_service (ai_service), and as the superuser for resets.
 */
import pg from "pg";
import { Client } from "../src/index.js";

export const TEMPLATE_DB = process.env.AGENT_STATE_TEST_DB ?? "agent_state_test";
export const TS_DB = process.env.AGENT_STATE_TS_DB ?? `${TEMPLATE_DB}_ts`;
export const SUPERUSER = process.env.PGUSER ?? "postgres";

export function connectionConfig(user: string = SUPERUSER, database: string = TS_DB): pg.ClientConfig {
  return { host: process.env.PGHOST, port: Number(process.env.PGPORT ?? 5432), user, database };
}

export function pool(user: string = SUPERUSER, max = 4): pg.Pool {
  return new pg.Pool({ ...connectionConfig(user), max });
}

/** What the saver writes, gone (sessions cascade to everything of a thread; tombstones too). */
export async function reset(): Promise<void> {
  const client = new pg.Client(connectionConfig());
  await client.connect();
  try {
    await client.query("delete from ai.agent_sessions; delete from ai.deleted_threads");
  } finally {
    await client.end();
  }
}

/** Waits until `check` returns a value that is not undefined (no sleeps racing a lease). */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Clients over pools of the test roles: tenant_a (`a`), tenant_b (`b`), app_service (`service`); `end` closes the pools. */
export interface RoleClients {
  a: Client;
  b: Client;
  service: Client;
  end(): Promise<void>;
}

export function roleClients(): RoleClients {
  const pools = [pool("tenant_a"), pool("tenant_b"), pool("app_service")] as const;
  return {
    a: new Client(pools[0]),
    b: new Client(pools[1]),
    service: new Client(pools[2]),
    end: async () => {
      await Promise.all(pools.map((p) => p.end()));
    },
  };
}
