export * from "./errors.js";
export * from "./models.js";
export { Client, connectionTargets, idempotencyKey, jsonParam, poolFromConnString, secondsParam } from "./client.js";
export { IDEMPOTENT, READS } from "./client.js";
export type { Fence, PutCheckpointArgs, RetryPolicy, Source } from "./client.js";
export { Worker, JobContext, Snooze, attemptDeadline, intervalSeconds, FINISH_RETRY_MS, RECONNECT_PROBE_MS } from "./worker.js";
export type { Handler, WorkerOptions, WorkerStats } from "./worker.js";
