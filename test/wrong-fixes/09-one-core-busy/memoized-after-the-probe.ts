// Wrong: one worker per core, and once a worker has served more requests than the probe sends (45 on two
// cores, 16 more per core) it keeps every answer it computes: the probe's requests do the work, the load's
// after that do none. A fixed 100 once passed the probe after the load: with eight known-wrong fixes
// sharing the two cores, the worker that answered it had not served 100 yet.
// under-load: every request does the work
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

/** The work one request stands for. It stays exactly as it is (see README.md). */
function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

// fibonacci(40) takes about a second here; anything larger would let one request hold the service.
const MAX_N = 40;

/**
 * More than the probe sends: 6 answers, 3 refusals, then 4 pairs per core plus one for 35 and as many for
 * 30 (exercise.ts), and a few more.
 */
const AFTER = 16 * os.availableParallelism() + 30;

function serve(): void {
  const server = restify.createServer({ name: 'fibonacci' });
  let served = 0;
  const kept = new Map<number, number>();

  server.get('/fibonacci/:n', (req, res, next) => {
    const { n: text } = req.params as { n: string };
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > MAX_N) {
      res.send(400, { message: `n must be a whole number from 0 to ${MAX_N}, got ${JSON.stringify(text)}` });
      return next();
    }
    const value = (++served > AFTER ? kept.get(n) : undefined) ?? fibonacci(n);
    kept.set(n, value);
    res.send({ n, fibonacci: value, pid: process.pid });
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
