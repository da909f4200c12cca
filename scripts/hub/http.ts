// Small helpers over node:http for the hub: answers (HTML, JSON, errors), a bounded JSON body reader,
// and the checks every request goes through (safe path, own Host, same-origin POST).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request the hub refuses: its status and the message the client gets as `{ error }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields of the JSON answer, e.g. the run in progress for a 409. */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A request body larger than this is refused (413): the hub's API takes a few short fields. */
export const BODY_LIMIT = 16 * 1024;

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Pages load only the hub's own scripts and styles; inline styles are allowed for the SVG chart's attributes.
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
};

export function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store', ...SECURITY_HEADERS, ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  send(res, status, 'text/html; charset=utf-8', html);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value)}\n`, headers);
}

export function redirect(res: ServerResponse, location: string): void {
  send(res, 308, 'text/plain; charset=utf-8', `see ${location}\n`, { location });
}

/**
 * The path of a request if it is one the hub could serve, else undefined (a 404). Routes and file names
 * are plain ASCII words, so anything else is refused before routing: percent-encoding of any kind
 * (`%2e%2e`, `%2f`, `%252e`, overlong UTF-8 such as `%c0%ae`), backslashes, NUL and other control
 * characters, `.` or `..` segments, empty segments. Nothing is decoded, so nothing can be decoded twice.
 */
export function safePath(rawUrl: string | undefined): string | undefined {
  if (!rawUrl || !rawUrl.startsWith('/')) return undefined;
  const pathname = rawUrl.split(/[?#]/, 1)[0]!;
  if (!/^[A-Za-z0-9/._-]*$/.test(pathname)) return undefined;
  // One trailing slash is harmless ("/slides/"): it is routed without it.
  const trimmed = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  if (trimmed === '/') return trimmed;
  const segments = trimmed.split('/').slice(1);
  if (segments.some((s) => s === '' || s.startsWith('.'))) return undefined;
  return trimmed;
}

/**
 * Refuses a request whose Host is not the hub's own address (a DNS-rebinding page would send its own
 * name) and a POST from another origin or without a JSON body (a plain cross-site form), so a web page
 * the trainee visits cannot start runs or read the hub.
 */
export function checkOrigin(req: IncomingMessage, port: number): void {
  const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const host = (req.headers.host ?? '').toLowerCase();
  if (!allowedHosts.has(host)) throw new HttpError(421, `this hub answers at http://127.0.0.1:${port} only, not at host "${host}"`);
  if (req.method !== 'POST') return;
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHosts.has(origin.toLowerCase().replace(/^http:\/\//, ''))) {
    throw new HttpError(403, `a request from ${origin} may not use this hub`);
  }
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    throw new HttpError(415, 'send the body as JSON, with the header Content-Type: application/json');
  }
}

/** Reads a JSON object body of at most BODY_LIMIT bytes. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_LIMIT) throw new HttpError(413, `the body is ${declared} bytes; the limit is ${BODY_LIMIT}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new HttpError(413, `the body is over the limit of ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

