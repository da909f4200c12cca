// A real S3 API on 127.0.0.1 (s3rver, pure JS), run in its own process by the harness like any server.
// S3_LATENCY_MS delays every request before s3rver sees it, as a round trip to a remote region would,
// so upload queues form at the rates a workshop machine reaches. The data lives in S3_DIRECTORY.
import http from 'node:http';
import S3rver from 's3rver';

const port = Number(process.env.PORT ?? 0);
const directory = process.env.S3_DIRECTORY;
const latencyMs = Number(process.env.S3_LATENCY_MS ?? 0);
if (!directory) throw new Error('S3_DIRECTORY must name the folder for the data');

const s3rver = new S3rver({ directory, silent: true, resetOnClose: false });
const handle = s3rver.callback();
const server = http.createServer((req, res) => {
  if (latencyMs > 0) setTimeout(() => handle(req, res), latencyMs);
  else handle(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`s3rver on 127.0.0.1:${port}, latency ${latencyMs} ms\n`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
