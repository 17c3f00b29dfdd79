// LangGraph.js's published checkpointer validation suite, run against AgentStateSaver as a tenant
// (tenant_a: RLS and the function-only grants apply), each checkpointer on an emptied database.
import { deltaChannelHistoryTests, specTest } from "@langchain/langgraph-checkpoint-validation";
import type pg from "pg";
import { AgentStateSaver } from "../src/langgraph.js";
import { pool, reset } from "./db.js";

const initializer = {
  checkpointerName: "AgentStateSaver",
  async createCheckpointer() {
    await reset();
    return new AgentStateSaver(pool("tenant_a"));
  },
  async destroyCheckpointer(saver: AgentStateSaver) {
    await (saver.client.source as pg.Pool).end();
  },
};

specTest(initializer);
deltaChannelHistoryTests(initializer);
