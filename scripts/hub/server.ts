// The hub: a local web app on 127.0.0.1 with the exercises, the slides and live runs. node:http and a route
// table (routes.ts): the server-sent events and the asset allowlist need nothing a framework adds.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadAllExercises, type Exercise } from '../exercises.ts';
import { createMarkdown } from './markdown.ts';
import { checkOrigin, HttpError, safePath } from './http.ts';
import { route, sendError, type HubContext } from './routes.ts';
import { Runs, type RunsOptions, type RunSummary } from './runs.ts';
import { assetAllowlist } from './static.ts';

export const DEFAULT_HUB_PORT = 4000;

export interface HubOptions extends RunsOptions {
  /** 0 picks a free port. */
  port: number;
  /** Only the loopback address: '127.0.0.1' (default) or 'localhost'. */
  host?: string;
}

export interface Hub {
  url: string;
  port: number;
  /** The live run in progress, if any. */
  activeRun(): RunSummary | undefined;
  /** Ends the run in progress and every server it started, then stops listening. */
  close(): Promise<void>;
}

/** The port is taken: the message names the flag to choose another. */
export class HubPortError extends Error {
  override name = 'HubPortError';
}

export async function startHub(options: HubOptions): Promise<Hub> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`the hub binds to 127.0.0.1 only, not to "${host}"`);
  // Loaded once, in the background: the first page waits for it, later ones do not.
  let loading: Promise<Exercise[]> | undefined;
  const exercises = () => {
    loading ??= loadAllExercises().catch((error: unknown) => {
      loading = undefined; // a fixed manifest is picked up on the next request
      throw error;
    });
    return loading;
  };
  void exercises().catch(() => {});
  const runs = new Runs(options);
  const context: HubContext = { exercises, runs, assets: assetAllowlist(), markdown: createMarkdown(), resultsDir: options.resultsDir };

  let port = options.port;
  const server = http.createServer((req, res) => {
    void handle(context, req, res, port);
  });
  // A request Node cannot even parse (bad headers, a URL with spaces): a bare 400, and the hub carries on.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new HubPortError(`port ${options.port} on 127.0.0.1 is already in use; choose another with --port PORT`));
      else if (error.code === 'EACCES') reject(new HubPortError(`port ${options.port} needs privileges here; choose one above 1023 with --port PORT`));
      else reject(error);
    });
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    activeRun: () => runs.active(),
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await runs.close();
        server.closeAllConnections();
        await closed;
      })()),
  };
}

async function handle(context: HubContext, req: http.IncomingMessage, res: http.ServerResponse, port: number): Promise<void> {
  try {
    checkOrigin(req, port);
    const pathname = safePath(req.url);
    if (pathname === undefined) throw new HttpError(404, 'not found');
    const found = route(req.method ?? 'GET', pathname);
    if (found instanceof HttpError) throw found;
    await found.handler(context, req, res, found.params);
  } catch (error) {
    if (error instanceof HttpError) return sendError(req, res, error);
    // A bug or a broken file: the page says so, the hub keeps running, the terminal gets the stack.
    process.stderr.write(`hub: ${req.method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    sendError(req, res, new HttpError(500, error instanceof Error ? error.message : String(error)));
  }
}
