// The article's local benchmark, rebuilt: the same task's trace through each streaming serializer, on
// its own and then into zlib and base64 as the worker does it. Run it with `npm run bench` (about a
// minute; bfj gets few iterations because each takes a good part of a second).
import { Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import bfj from 'bfj';
import JSONStream from 'JSONStream';
import { JsonStreamStringify } from 'json-stream-stringify';
import { bench, describe } from 'vitest';
import { Base64Encoder } from './base64.ts';
import { buildTrace, type DebugPayload } from './trace.ts';

const trace = buildTrace(42);
const deflate = promisify(zlib.deflate);

/** JSONStream writes one chunk per value written to it: one per trace event. */
function jsonStream(events: DebugPayload): Readable {
  const json = JSONStream.stringify('[', ',', ']');
  // Written once the consumer is attached, so no chunk is lost.
  setImmediate(() => {
    for (const event of events) json.write(event);
    json.end();
  });
  return json as unknown as Readable;
}

/** Joins small chunks into blocks of about 64 KB, so zlib sees a few large writes. */
class Coalesce extends Transform {
  private parts: Buffer[] = [];
  private size = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size >= 65_536) this.release();
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.size > 0) this.release();
    callback();
  }

  private release(): void {
    this.push(Buffer.concat(this.parts, this.size));
    this.parts = [];
    this.size = 0;
  }
}

function nullSink(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

/** source → [coalesce] → deflate → base64, collected into one string, as the worker does. */
async function compress(source: Readable, coalesce = false): Promise<void> {
  let text = '';
  const collect = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      text += chunk;
      callback();
    },
  });
  const stages = coalesce ? [new Coalesce()] : [];
  await pipeline([source, ...stages, zlib.createDeflate(), new Base64Encoder(), collect]);
  if (text.length === 0) throw new Error('nothing came out');
}

const slow = { time: 0, iterations: 5, warmupTime: 0, warmupIterations: 1 };
const quick = { time: 1_000, warmupTime: 200 };

describe(`serialize only: ${trace.length} events, ${JSON.stringify(trace).length} bytes of JSON, to a null sink`, () => {
  bench('bfj.streamify', () => pipeline(bfj.streamify(trace), nullSink()), slow);
  bench('JSONStream.stringify', () => pipeline(jsonStream(trace), nullSink()), quick);
  bench('json-stream-stringify', () => pipeline(new JsonStreamStringify(trace), nullSink()), quick);
  bench('JSON.stringify', () => {
    JSON.stringify(trace);
  }, quick);
});

describe('serialize, deflate, base64: what the worker does', () => {
  bench('bfj.streamify', () => compress(bfj.streamify(trace)), slow);
  bench('bfj.streamify, chunks coalesced', () => compress(bfj.streamify(trace), true), quick);
  bench('JSONStream.stringify', () => compress(jsonStream(trace)), quick);
  bench('JSONStream.stringify, chunks coalesced', () => compress(jsonStream(trace), true), quick);
  bench('json-stream-stringify', () => compress(new JsonStreamStringify(trace)), quick);
  bench('JSON.stringify, one deflate call', async () => {
    (await deflate(JSON.stringify(trace))).toString('base64');
  }, quick);
});
