// bfj ships no types; this declares the part the workshop uses.
declare module 'bfj' {
  import type { Readable } from 'node:stream';
  interface StreamifyOptions {
    space?: number | string;
    yieldRate?: number;
    bufferLength?: number;
    highWaterMark?: number;
  }
  /** Serialises `data` to JSON asynchronously, as a readable stream of small string chunks. */
  export function streamify(data: unknown, options?: StreamifyOptions): Readable;
  const bfj: { streamify: typeof streamify };
  export default bfj;
}
