// LangGraph.js's BaseStore over schema ai (AgentStateStore; tests/python/test_memory.py's store
// tests for TypeScript): items typed as LangGraph's, filters by JSON type, full-text and vector
// ranking, namespaces, a batch over ai.batch_memory's limit, tenants apart, an end user's memory
// kept by a service acting for it, and a graph node given the store.
import { randomUUID } from "node:crypto";
import { Embeddings } from "@langchain/core/embeddings";
import { InvalidNamespaceError, type Operation } from "@langchain/langgraph-checkpoint";
import { AgentStateStore, BATCH_LIMIT } from "../src/langgraph.js";
import { roleClients } from "./db.js";

// clients over pools of the test roles (a pool connects on its first call)
const { a, b, service, end } = roleClients();
afterAll(end);

const ns = (...labels: string[]) => ["test", `store-${randomUUID()}`, ...labels];

/** Three axes: a text naming a colour is that axis, anything else the middle. */
class Axes extends Embeddings {
  constructor() {
    super({});
  }
  private static vector(text: string): number[] {
    const axes: Record<string, number[]> = { red: [1, 0, 0], green: [0, 1, 0], blue: [0, 0, 1] };
    return Object.entries(axes).find(([word]) => text.includes(word))?.[1] ?? [0.3, 0.3, 0.3];
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map(Axes.vector);
  }
  async embedQuery(text: string): Promise<number[]> {
    return Axes.vector(text);
  }
}

describe("AgentStateStore", () => {
  it("puts, gets, searches, lists and deletes items, typed as LangGraph's", async () => {
    const store = new AgentStateStore(a);
    const prefs = ns("prefs");
    await store.put(prefs, "theme", { theme: "dark", n: 9 });
    await store.put(prefs, "lang", { lang: "fr", n: 10 });
    const got = await store.get(prefs, "theme");
    expect(got).toMatchObject({ namespace: prefs, key: "theme", value: { theme: "dark", n: 9 } });
    expect(got!.createdAt).toBeInstanceOf(Date);
    expect(got!.updatedAt).toBeInstanceOf(Date);
    expect((await store.search(prefs, { filter: { n: { $lt: 10 } } })).map((i) => i.key)).toEqual(["theme"]);
    const found = await store.search(prefs, { query: "dark" });
    expect(found.map((i) => i.key)).toEqual(["theme"]);
    expect(found[0]!.score).toBeGreaterThan(0);
    expect(await store.listNamespaces({ prefix: prefs.slice(0, 2) })).toEqual([prefs]);
    await store.put(prefs, "hidden", { theme: "dark too" }, false); // not searchable by text
    expect((await store.search(prefs, { query: "dark" })).map((i) => i.key)).toEqual(["theme"]);
    await store.delete(prefs, "theme");
    expect(await store.get(prefs, "theme")).toBeNull();
    await expect(store.put(["bad.label"], "k", {})).rejects.toBeInstanceOf(InvalidNamespaceError);
  });

  it("compares numbers as numbers and strings as strings", async () => {
    const store = new AgentStateStore(a);
    const space = ns();
    await store.put(space, "nine", { n: 9, s: "9" });
    await store.put(space, "ten", { n: 10, s: "10" });
    expect((await store.search(space, { filter: { n: { $lt: 10 } } })).map((i) => i.key)).toEqual(["nine"]);
    expect((await store.search(space, { filter: { s: { $gt: "10" } } })).map((i) => i.key)).toEqual(["nine"]);
  });

  it("ranks by the nearest indexed field with an index, and leaves out an item put with index false", async () => {
    const store = new AgentStateStore(a, { index: { dims: 3, embeddings: new Axes(), fields: ["text"] } });
    const space = ns();
    await store.put(space, "r", { text: "red apple" });
    await store.put(space, "g", { text: "green apple" });
    await store.put(space, "plain", { text: "blue" }, false);
    const found = await store.search(space, { query: "red" });
    expect(found.map((i) => i.key)).toEqual(["r", "g"]);
    expect(found[0]!.score).toBeCloseTo(1, 5);
  });

  it("runs a batch longer than one call of ai.batch_memory, in order", async () => {
    const store = new AgentStateStore(a);
    const space = ns();
    const ops: Operation[] = [];
    for (let i = 0; i < BATCH_LIMIT + 5; i += 1) ops.push({ namespace: space, key: `k${i}`, value: { i } });
    ops.push({ namespace: space, key: `k${BATCH_LIMIT + 4}` });
    ops.push({ namespacePrefix: space, filter: { i: 3 }, limit: 10, offset: 0 });
    const results = (await store.batch(ops)) as unknown[];
    expect(results).toHaveLength(BATCH_LIMIT + 7);
    expect(results[BATCH_LIMIT + 5]).toMatchObject({ key: `k${BATCH_LIMIT + 4}`, value: { i: BATCH_LIMIT + 4 } });
    expect((results[BATCH_LIMIT + 6] as { key: string }[]).map((i) => i.key)).toEqual(["k3"]);
  });

  it("keeps tenants apart, and a service acting for an end user keeps that user's memory", async () => {
    const space = ns();
    await new AgentStateStore(a).put(space, "k", { who: "a" });
    const storeB = new AgentStateStore(b);
    expect(await storeB.get(space, "k")).toBeNull();
    expect(await storeB.search(space)).toEqual([]);
    expect(await storeB.listNamespaces({ prefix: space })).toEqual([]);
    await storeB.put(space, "k", { who: "b" });
    expect((await new AgentStateStore(a).get(space, "k"))?.value).toEqual({ who: "a" });

    const user = `user-${randomUUID()}`;
    await service.actingAs(user, (u) => new AgentStateStore(u).put(space, "k", { v: 1 }));
    expect(await service.actingAs(`other-${randomUUID()}`, (u) => new AgentStateStore(u).get(space, "k"))).toBeNull();
    expect((await service.actingAs(user, (u) => new AgentStateStore(u).get(space, "k")))?.value).toEqual({ v: 1 });
  });

  it("is the store a LangGraph.js graph's nodes are given", async () => {
    const { Annotation, END, START, StateGraph } = await import("@langchain/langgraph");
    const space = ns("graph");
    const State = Annotation.Root({ seen: Annotation<string | null>() });
    const graph = new StateGraph(State)
      .addNode("remember", async (_state, config) => {
        await config.store!.put(space, "fact", { text: "the sky is blue" });
        return { seen: ((await config.store!.get(space, "fact"))?.value.text as string) ?? null };
      })
      .addEdge(START, "remember")
      .addEdge("remember", END)
      .compile({ store: new AgentStateStore(a) });
    expect(await graph.invoke({ seen: null })).toEqual({ seen: "the sky is blue" });
    expect((await new AgentStateStore(a).get(space, "fact"))?.value).toEqual({ text: "the sky is blue" });
  });
});
