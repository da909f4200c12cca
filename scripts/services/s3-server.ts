// A real S3 API on 127.0.0.1 (s3rver, pure JS), run in its own process by the harness like any server.
// S3_LATENCY_MS delays every request before s3rver sees it, as a round trip to a remote region would,
// so upload queues form at the rates a workshop machine reaches. The data lives in S3_DIRECTORY.
// POST /_hotpath/at-once?bucket=B drops the delay for one bucket: once its server's load is over, the
// checks wait for the backlog to arrive, not for it to drain at the region's pace. Only the harness may:
// the request must carry S3_CONTROL_TOKEN, which the servers under test are never given.
import http from 'node:http';
import S3rver from 's3rver';

const port = Number(process.env.PORT ?? 0);
const directory = process.env.S3_DIRECTORY;
const latencyMs = Number(process.env.S3_LATENCY_MS ?? 0);
const controlToken = process.env.S3_CONTROL_TOKEN;
if (!directory) throw new Error('S3_DIRECTORY must name the folder for the data');

const s3rver = new S3rver({ directory, silent: true, resetOnClose: false });
const handle = s3rver.callback();

// Objects stored per bucket, counted as distinct keys whose PUT was answered 2xx (a key written again is
// not another object), under S3_COUNT_PREFIX when it is set (the work the exercise hands on, not any other
// object a server writes). A listing taken while objects are being written can fail in s3rver, so probes
// watch this count to know when uploads have settled, then list. Served on /_hotpath/stored, a path no S3
// bucket can have (bucket names have no underscore).
const countPrefix = process.env.S3_COUNT_PREFIX ?? '';
const stored: Record<string, number> = {};
const storedKeys = new Set<string>();
// And the PUTs answered 2xx over a key already stored, per bucket: a placeholder written first and the
// object later counts as stored from the placeholder on. On /_hotpath/rewritten.
const rewritten: Record<string, number> = {};
// Objects whose PUT has not been answered yet. s3rver lets a GET read a half-written file; S3 never shows
// an object before its PUT completes, so such a GET gets S3's 404 here (a probe then asks again).
const writing = new Set<string>();
function trackPut(req: http.IncomingMessage, res: http.ServerResponse): void {
  const objectPath = (req.url ?? '').split('?')[0]!;
  const [bucket, key] = objectPath.slice(1).split(/\/(.*)/s);
  if (req.method !== 'PUT' || !bucket || !key || (req.url ?? '').includes('uploadId=')) return;
  writing.add(objectPath);
  res.once('close', () => writing.delete(objectPath));
  res.once('finish', () => {
    if (res.statusCode < 200 || res.statusCode >= 300 || !decodeURIComponent(key).startsWith(countPrefix)) return;
    if (storedKeys.has(objectPath)) {
      rewritten[bucket] = (rewritten[bucket] ?? 0) + 1;
      return;
    }
    storedKeys.add(objectPath);
    stored[bucket] = (stored[bucket] ?? 0) + 1;
  });
}

function stillWriting(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !writing.has((req.url ?? '').split('?')[0]!)) return false;
  res.writeHead(404, { 'content-type': 'application/xml' });
  res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
  return true;
}

const atOnce = new Set<string>();
const bucketOf = (req: http.IncomingMessage) => (req.url ?? '').split('?')[0]!.split('/')[1] ?? '';

const server = http.createServer((req, res) => {
  if (req.url === '/_hotpath/stored' || req.url === '/_hotpath/rewritten') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/_hotpath/stored' ? stored : rewritten));
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/_hotpath/at-once?')) {
    const allowed = Boolean(controlToken) && req.headers['x-hotpath-control'] === controlToken;
    if (allowed) atOnce.add(new URLSearchParams(req.url.split('?')[1]).get('bucket') ?? '');
    res.statusCode = allowed ? 200 : 403;
    res.end();
    return;
  }
  trackPut(req, res);
  if (stillWriting(req, res)) return;
  if (latencyMs > 0 && !atOnce.has(bucketOf(req))) setTimeout(() => handle(req, res), latencyMs);
  else handle(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`s3rver on 127.0.0.1:${port}, latency ${latencyMs} ms\n`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
