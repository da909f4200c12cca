// The package is named JSONStream and @types/jsonstream declares it under the lowercase name, with a
// write() that takes only strings. This declares the part the workshop uses, as the package behaves.
declare module 'JSONStream' {
  /** A through stream: each value written is serialized with JSON.stringify and pushed as one chunk. */
  interface Stringifier extends NodeJS.ReadableStream {
    write(value: unknown): boolean;
    end(value?: unknown): void;
  }
  /** open, separator and close default to '[\n', '\n,\n' and '\n]\n'; false means '', '\n' and ''. */
  export function stringify(open?: string | false, separator?: string, close?: string): Stringifier;
  const JSONStream: { stringify: typeof stringify };
  export default JSONStream;
}
