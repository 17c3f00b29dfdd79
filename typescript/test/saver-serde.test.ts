/**
 * A serializer's type name is not trusted (issue 34 item 5), as in the Python saver: a serde whose
 * type says "msgpack" but whose bytes are something else (here an envelope, a one-item msgpack
 * array around JSON) reads back every message, because the TypeScript saver writes every channel
 * value whole (it sends no delta: `channel_values.bases` NULL), and the database joins no such bytes to
 * another value.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentStateSaver, AgentStateSerializer } from "../src/langgraph.js";
import { pool } from "./db.js";

/** Lists (the message channel) in an envelope; anything else (metadata: JSON, as the saver reads it) as is. */
class Envelope extends AgentStateSerializer {
  override async dumpsTyped(obj: unknown): Promise<[string, Uint8Array]> {
    const [type, data] = await super.dumpsTyped(obj);
    if (!Array.isArray(obj)) return [type, data as Uint8Array];
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    return ["msgpack", Uint8Array.from([0x91, ...bytes])];
  }

  override async loadsTyped(type: string, data: Uint8Array | string): Promise<any> {
    if (type !== "msgpack" || typeof data === "string") return super.loadsTyped(type, data);
    return super.loadsTyped("json", data.subarray(1));
  }
}

let tenantPool: pg.Pool;
let superuser: pg.Pool;

beforeAll(() => {
  tenantPool = pool("tenant_a");
  superuser = pool();
});

afterAll(async () => {
  await Promise.all([tenantPool.end(), superuser.end()]);
});

describe("a serializer whose type says msgpack", () => {
  it("reads back every message of a 31-message thread, and no value is stored as a delta", async () => {
    const { END, MessagesAnnotation, START, StateGraph } = await import("@langchain/langgraph");
    const { AIMessage, HumanMessage } = await import("@langchain/core/messages");
    const build = () =>
      new StateGraph(MessagesAnnotation)
        .addNode("reply", async (s: { messages: unknown[] }) => ({ messages: [new AIMessage(`reply ${s.messages.length}`)] }))
        .addEdge(START, "reply")
        .addConditionalEdges("reply", (s: { messages: unknown[] }) => (s.messages.length < 31 ? "reply" : END), ["reply", END])
        .compile({ checkpointer: new AgentStateSaver(tenantPool, { serde: new Envelope() }) });
    const threadId = `ts-serde-${randomUUID()}`;
    const config = { configurable: { thread_id: threadId }, recursionLimit: 100 };
    await build().invoke({ messages: [new HumanMessage("question")] }, config);
    const state = await build().getState(config);
    const messages = state.values.messages as { content: unknown }[];
    expect(messages.length).toBe(31);
    expect(messages.map((m) => m.content)).toEqual(["question", ...Array.from({ length: 30 }, (_, i) => `reply ${i + 1}`)]);
    const { rows } = await superuser.query(
      "select count(*) filter (where base_version is not null)::int as deltas, count(*)::int as values" +
        " from ai.checkpoint_blobs where thread_id = $1",
      [threadId],
    );
    expect(rows[0].values).toBeGreaterThan(30);
    expect(rows[0].deltas).toBe(0);
  });
});
