// The network trace a task records while it talks to the bank: what postTaskDebugging uploads so an
// engineer can replay a production task on a laptop. Shared by the server, the stages and the probe.
import { randomBytes } from 'node:crypto';

export interface TraceEntry {
  seq: number;
  method: string;
  url: string;
  status: number;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  /** The bank's answer as it came over the wire (random base64: it barely compresses). */
  responseBody: string;
  timings: { dnsMs: number; connectMs: number; firstByteMs: number; totalMs: number };
}

export interface NetworkTrace {
  taskId: string;
  institution: string;
  startedAt: string;
  entries: TraceEntry[];
}

export const TRACE_ENTRIES = 60;
/** The length of every bank answer in a trace: the replay tool needs each one whole. */
export const BODY_CHARS = 800;
// Bank answers are slices of one random pool: as incompressible as real ciphertext-heavy traffic, but
// cheap to make, so the worker's CPU goes to its own work and the upload path shows.
const POOL = randomBytes(1 << 20).toString('base64');

function bankAnswer(): string {
  const offset = Math.floor(Math.random() * (POOL.length - BODY_CHARS));
  return POOL.slice(offset, offset + BODY_CHARS);
}

export function recordTrace(taskId: string, institution: string): NetworkTrace {
  const entries: TraceEntry[] = [];
  for (let seq = 0; seq < TRACE_ENTRIES; seq++) {
    entries.push({
      seq,
      method: seq % 5 === 0 ? 'POST' : 'GET',
      url: `https://api.${institution}.example/v2/accounts/${seq % 7}/transactions?page=${seq}`,
      status: 200,
      requestHeaders: { accept: 'application/json', 'user-agent': 'hotpath-worker/1.0', 'x-request-id': `${taskId}-${seq}` },
      responseHeaders: { 'content-type': 'application/json', 'cache-control': 'no-store', server: 'bank-gateway' },
      responseBody: bankAnswer(),
      timings: { dnsMs: 1, connectMs: 3, firstByteMs: 20 + (seq % 13), totalMs: 25 + (seq % 17) },
    });
  }
  return { taskId, institution, startedAt: new Date().toISOString(), entries };
}

/** Where a task's debugging payload lands in the bucket. */
export function debugKey(taskId: string): string {
  return `debug/${taskId}.json.deflate.b64`;
}
