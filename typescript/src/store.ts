/**
 * `AgentStateStore`: LangGraph.js's `BaseStore` (long-term memory) over schema `ai`, as Python's
 * `agent_state.store.AgentStateStore` (docs/memory.md).
 *
 * A batch of operations is one call of `ai.batch_memory` (at most 1,000 operations a call; a
 * larger batch is sent in calls of that size, in order): one statement, one round trip, one
 * transaction. Items belong to the caller's owner (row level security: a tenant, or the end user
 * a service acts for, `client.actingAs(owner, (c) => new AgentStateStore(c)...)`), expired items
 * are never returned, filters compare by JSON type, and a query without embeddings ranks by
 * full-text search.
 *
 * With `index: { dims, embeddings, fields }` the store embeds the indexed fields of each put
 * (the `fields` paths, `"$"` the whole value, as LangGraph's `PostgresStore`) and the query of
 * each search, and the database ranks by the nearest field (`distanceType` cosine,
 * inner_product or l2).
 */
import {
  BaseStore,
  getTextAtPath,
  validateNamespace,
  type GetOperation,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import type { Client } from "./client.js";
import type { MemoryOp } from "./models.js";

/** LangGraph's `IndexConfig` plus the distance the search ranks by (as `PostgresStore`'s). */
export interface MemoryIndexConfig extends IndexConfig {
  distanceType?: "cosine" | "inner_product" | "l2";
}

/** ai.batch_memory takes at most 1000 operations; a larger batch is sent in calls of that size, in order. */
export const BATCH_LIMIT = 1000;

/** An item as ai.batch_memory returns it (JSON: times as ISO 8601 text). */
interface FoundItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  score?: number | null;
}

function item(found: FoundItem): Item {
  return {
    namespace: found.namespace,
    key: found.key,
    value: found.value,
    createdAt: new Date(found.created_at),
    updatedAt: new Date(found.updated_at),
  };
}

function searchItem(found: FoundItem): SearchItem {
  return { ...item(found), ...(found.score === null || found.score === undefined ? {} : { score: found.score }) };
}

const isPut = (op: Operation): op is PutOperation => "value" in op;
const isSearch = (op: Operation): op is SearchOperation => "namespacePrefix" in op;
const isGet = (op: Operation): op is GetOperation => "key" in op && "namespace" in op && !("value" in op);
const isList = (op: Operation): op is ListNamespacesOperation => !isPut(op) && !isSearch(op) && !isGet(op);

export class AgentStateStore extends BaseStore {
  /** The client the store calls. */
  readonly client: Client;
  readonly indexConfig: MemoryIndexConfig | null;
  private readonly fields: string[];

  constructor(client: Client, options: { index?: MemoryIndexConfig } = {}) {
    super();
    this.client = client;
    this.indexConfig = options.index ?? null;
    const distance = this.indexConfig?.distanceType ?? "cosine";
    if (!["cosine", "inner_product", "l2"].includes(distance)) {
      throw new Error(`distanceType must be cosine, inner_product or l2, not ${distance}`);
    }
    this.fields = this.indexConfig?.fields ?? ["$"];
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const calls: MemoryOp[] = [];
    const toEmbed: [Extract<MemoryOp, { op: "put" }>, string, string][] = []; // (call, field, text)
    const queries: [Extract<MemoryOp, { op: "search" }>, string][] = [];
    const embeddings = this.indexConfig?.embeddings;
    for (const op of operations) {
      // as BaseStore's own methods: a put's namespace is checked strictly, a get's allows the empty and the reserved root
      if ("namespace" in op) validateNamespace(op.namespace, isPut(op) ? {} : { allowEmpty: true, allowReservedRoot: true });
    }
    for (const op of operations) {
      if (isPut(op)) {
        const call: Extract<MemoryOp, { op: "put" }> = { op: "put", namespace: op.namespace, key: op.key, value: null };
        calls.push(call);
        if (op.value === null) continue; // a put of null deletes
        call.value = op.value as Record<string, never>;
        if (op.index === false) {
          call.index_texts = [];
        } else if (op.index === undefined && this.indexConfig === null) {
          call.index_texts = null; // the keys and strings of the whole value
        } else {
          const found = texts(op.value, op.index ?? this.fields);
          call.index_texts = found.map(([, text]) => text);
          if (embeddings) for (const [field, text] of found) toEmbed.push([call, field, text]);
        }
      } else if (isSearch(op)) {
        const call: Extract<MemoryOp, { op: "search" }> = {
          op: "search",
          namespace_prefix: op.namespacePrefix,
          filter: (op.filter ?? null) as Record<string, never> | null,
          query: op.query ?? null,
          limit: op.limit ?? 10,
          offset: op.offset ?? 0,
          distance: this.indexConfig?.distanceType ?? "cosine",
        };
        calls.push(call);
        if (op.query && embeddings) queries.push([call, op.query]);
      } else if (isGet(op)) {
        calls.push({ op: "get", namespace: op.namespace, key: op.key });
      } else if (isList(op)) {
        let prefix: string[] | null = null;
        let suffix: string[] | null = null;
        for (const condition of op.matchConditions ?? []) {
          if (condition.matchType === "prefix") prefix = condition.path;
          else if (condition.matchType === "suffix") suffix = condition.path;
          else throw new Error(`unknown match type ${String(condition.matchType)}`);
        }
        calls.push({ op: "list_namespaces", prefix, suffix, max_depth: op.maxDepth ?? null, limit: op.limit ?? 100, offset: op.offset ?? 0 });
      }
    }
    if (embeddings && toEmbed.length > 0) {
      const vectors = await embeddings.embedDocuments(toEmbed.map(([, , text]) => text));
      toEmbed.forEach(([call, field], i) => {
        call.embeddings = { ...(call.embeddings ?? {}), [field]: vectors[i]!.map(Number) };
      });
    }
    if (embeddings) {
      for (const [call, query] of queries) call.query_embedding = (await embeddings.embedQuery(query)).map(Number);
    }
    const found: unknown[] = [];
    for (let start = 0; start < calls.length; start += BATCH_LIMIT) {
      found.push(...(await this.client.batchMemory(calls.slice(start, start + BATCH_LIMIT))));
    }
    return operations.map((op, i) => {
      const value = found[i];
      if (isPut(op)) return undefined;
      if (isSearch(op)) return (value as FoundItem[]).map(searchItem);
      if (isGet(op)) return value === null ? null : item(value as FoundItem);
      return value as string[][];
    }) as OperationResults<Op>;
  }
}

/** (field name, text) of each indexed path of a value, as PostgresStore names them. */
function texts(value: Record<string, unknown>, paths: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const path of paths) {
    const found = getTextAtPath(value, path);
    found.forEach((text, i) => out.push([found.length > 1 ? `${path}.${i}` : path, text]));
  }
  return out;
}
