// Wrong: one worker per core, and once a worker has served 40 requests it sheds the expensive ones
// (n of 25 and more) with a small error body, sent with status 200 so that the load counts it as answered.
// under-load: fibonacci(30) is 832040
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

/** The work one request stands for. It stays exactly as it is (see README.md). */
function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

// fibonacci(40) takes about a second here; anything larger would let one request hold the service.
const MAX_N = 40;

function serve(): void {
  const server = restify.createServer({ name: 'fibonacci' });
  let served = 0;

  server.get('/fibonacci/:n', (req, res, next) => {
    const { n: text } = req.params as { n: string };
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > MAX_N) {
      res.send(400, { message: `n must be a whole number from 0 to ${MAX_N}, got ${JSON.stringify(text)}` });
      return next();
    }
    if (++served > 40 && n >= 25) {
      res.send({ n, error: 'busy, try a smaller n' });
      return next();
    }
    res.send({ n, fibonacci: fibonacci(n), pid: process.pid });
    return next();
  });

  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    console.log(`fibonacci worker (pid ${process.pid}) listening on ${server.url}`);
  });
}

if (cluster.isPrimary) {
  // Cores this process may use: the CPU count, or less under a CPU affinity mask.
  const cores = os.availableParallelism();
  console.log(`primary (pid ${process.pid}) starting ${cores} workers`);
  for (let i = 0; i < cores; i++) cluster.fork();

  const served = new Set<number>();
  cluster.on('listening', (worker) => served.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    // A worker told to go (disconnect, shutdown) is not replaced.
    if (worker.exitedAfterDisconnect) return;
    const how = signal ?? `exit code ${code}`;
    // One that never listened would die again the same way: replacing it would only loop.
    if (!served.has(worker.id)) {
      console.error(`worker ${worker.process.pid} died (${how}) before it listened; not starting another`);
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    console.error(`worker ${worker.process.pid} died (${how}); starting another`);
    cluster.fork();
  });
} else {
  serve();
}
