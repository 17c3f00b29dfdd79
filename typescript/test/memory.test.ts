// Long-term memory through the client (docs/memory.md; tests/python/test_memory.py for
// TypeScript): put, get, search (filter, full text, vectors), namespaces, delete, batch; typed
// errors; tenants apart, a service acting for an end user; archive and restore intact; the sweep.
import { randomUUID } from "node:crypto";
import { InvalidArgument, TooLarge } from "../src/index.js";
import type { MemoryItem } from "../src/index.js";
import { roleClients } from "./db.js";

// clients over pools of the test roles (a pool connects on its first call)
const { a, b, service, end } = roleClients();
afterAll(end);

const ns = (...labels: string[]) => ["test", `mem-${randomUUID()}`, ...labels];

describe("long-term memory", () => {
  it("puts, gets, searches, lists and deletes items, typed", async () => {
    const prefs = ns("prefs");
    const put: MemoryItem = await a.putMemory(prefs, "theme", { theme: "dark", n: 9 }, { ttlSeconds: 3600 });
    expect(put).toMatchObject({ namespace: prefs, key: "theme", value: { theme: "dark", n: 9 }, score: null });
    expect(put.expires_at).toBeInstanceOf(Date);
    await a.putMemory(prefs, "lang", { lang: "fr", n: 10 });
    expect((await a.getMemory(prefs, "theme"))?.value).toEqual({ theme: "dark", n: 9 });
    expect((await a.searchMemory(prefs, { filter: { n: { $lt: 10 } } })).map((i) => i.key)).toEqual(["theme"]);
    const found = await a.searchMemory(prefs, { query: "dark" });
    expect(found.map((i) => i.key)).toEqual(["theme"]);
    expect(found[0]!.score).toBeGreaterThan(0);
    expect(await a.listMemoryNamespaces({ prefix: prefs.slice(0, 2) })).toEqual([prefs]);
    expect(await a.deleteMemory(prefs, "theme")).toBe(true);
    expect(await a.getMemory(prefs, "theme")).toBeNull();
    expect(await a.deleteMemory(prefs, "theme")).toBe(false);
  });

  it("ranks by the nearest embedding when given one, and runs a batch in order", async () => {
    const space = ns();
    await a.putMemory(space, "r", { text: "red" }, { embeddings: { text: [1, 0, 0] } });
    await a.putMemory(space, "g", { text: "green" }, { embeddings: { text: [0, 1, 0] } });
    await a.putMemory(space, "plain", { text: "red too" }, { indexTexts: [] }); // neither embedded nor searchable by text
    const nearest = await a.searchMemory(space, { queryEmbedding: [0.9, 0.1, 0] });
    expect(nearest.map((i) => i.key)).toEqual(["r", "g"]);
    expect(nearest[0]!.score).toBeGreaterThan(nearest[1]!.score!);
    expect((await a.searchMemory(space, { query: "red" })).map((i) => i.key)).toEqual(["r"]);

    const results = await a.batchMemory([
      { op: "put", namespace: space, key: "b", value: { v: 1 } },
      { op: "get", namespace: space, key: "b" },
      { op: "put", namespace: space, key: "b", value: null }, // a put of null deletes
      { op: "get", namespace: space, key: "b" },
    ]);
    expect(results).toHaveLength(4);
    expect(results[1]).toMatchObject({ key: "b", value: { v: 1 } });
    expect(results[3]).toBeNull();
  });

  it("refuses bad arguments with typed errors", async () => {
    await expect(a.searchMemory(ns(), { filter: { n: { $regex: "x" } } })).rejects.toBeInstanceOf(InvalidArgument);
    await expect(a.putMemory(ns(), "big", { t: "x".repeat(2 << 20) })).rejects.toBeInstanceOf(TooLarge);
  });

  it("keeps tenants apart, and a service acting for an end user keeps that user's memory", async () => {
    const space = ns();
    await a.putMemory(space, "k", { who: "a" });
    expect(await b.getMemory(space, "k")).toBeNull();
    expect(await b.searchMemory(space)).toEqual([]);
    await b.putMemory(space, "k", { who: "b" });
    expect((await a.getMemory(space, "k"))?.value).toEqual({ who: "a" });

    const user = `user-${randomUUID()}`;
    await service.actingAs(user, (u) => u.putMemory(space, "k", { v: 1 }));
    expect(await service.actingAs(`other-${randomUUID()}`, (u) => u.getMemory(space, "k"))).toBeNull();
    expect((await service.actingAs(user, (u) => u.getMemory(space, "k")))?.value).toEqual({ v: 1 });
  });

  it("archives and restores an owner's items intact; another tenant moves none of them", async () => {
    const space = ns("alice");
    await a.putMemory(space, "prefs", { theme: "dark" }, { ttlSeconds: 30 * 86400, embeddings: { theme: [0.5, 0.5] } });
    await a.putMemory(space, "notes", { text: "kilo lima" });
    const before = await a.searchMemory(space);
    expect(await b.archiveMemory(space)).toBe(0);
    expect(await a.archiveMemory(space, 1)).toBe(1);
    expect(await a.archiveMemory(space, 1)).toBe(1);
    expect(await a.archiveMemory(space)).toBe(0);
    expect(await a.searchMemory(space)).toEqual([]);
    expect(await b.restoreMemory(space)).toEqual({ restored: 0, superseded: 0 });
    expect(await a.restoreMemory(space)).toEqual({ restored: 2, superseded: 0 });
    expect(await a.searchMemory(space)).toEqual(before); // value, created and updated times, expiry
    expect((await a.searchMemory(space, { queryEmbedding: [1, 1] })).map((i) => i.key)).toEqual(["prefs"]);
  });

  it("sweeps expired items for a service only", async () => {
    expect(await service.maySweepMemory()).toBe(true);
    expect(await a.maySweepMemory()).toBe(false);
    expect(await service.sweepMemory(1000)).toBeGreaterThanOrEqual(0);
    await expect(a.sweepMemory()).rejects.toMatchObject({ code: "42501" });
  });
});
