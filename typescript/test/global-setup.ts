import pg from "pg";
import { TEMPLATE_DB, TS_DB, connectionConfig } from "./db.js";

/**
 * A fresh copy of the deployed test database for this run (dropped again at the end), unless
 * `make test-typescript` made it already (AGENT_STATE_TS_READY=1: it starts PgBouncer after the copy).
 */
export async function setup(): Promise<() => Promise<void>> {
  const admin = new pg.Client(connectionConfig(undefined, "postgres"));
  await admin.connect();
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  try {
    if (process.env.AGENT_STATE_TS_READY === "1") return async () => undefined;
    await admin.query(`drop database if exists ${quote(TS_DB)} with (force)`);
    await admin.query(`create database ${quote(TS_DB)} template ${quote(TEMPLATE_DB)}`);
  } finally {
    await admin.end();
  }
  return async () => {
    const again = new pg.Client(connectionConfig(undefined, "postgres"));
    await again.connect();
    try {
      await again.query(`drop database if exists ${quote(TS_DB)} with (force)`);
    } finally {
      await again.end();
    }
  };
}
