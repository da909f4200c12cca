// s3rver ships no types; this declares the part the workshop uses.
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface S3rverOptions {
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Koa's request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
