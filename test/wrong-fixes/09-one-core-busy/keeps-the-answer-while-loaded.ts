// Wrong: one worker per core, and while requests come fast (more than 20 in the last second, as under
// load, never from the probe) each worker answers n = 30, the n the load asks for, from the answer it
// computed last. The probe's requests all do the work, before the load and after it, so the answers are
// right and their times honest; the load's answers cost next to nothing. The answer for 30 kept for good,
// with a thread spinning beside it so that the cores looked busy, passed `verify 09` at 76x the shipped
// server's req/s before its goal held the CPU time per answer.
// verdict: CPU time per answer
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

/** The work one request stands for. */
function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

let second = 0;
let arrived = 0;
let kept: number | undefined;
function answer(n: number): number {
  const now = Math.floor(Date.now() / 1000);
  if (now !== second) [second, arrived] = [now, 0];
  arrived += 1;
  if (n !== 30) return fibonacci(n);
  if (kept === undefined || arrived <= 20) kept = fibonacci(n);
  return kept;
}

if (cluster.isPrimary) {
  for (let i = 0; i < os.availableParallelism(); i++) cluster.fork();
} else {
  const server = restify.createServer({ name: 'fibonacci' });
  server.get('/fibonacci/:n', (req, res, next) => {
    const { n: text } = req.params as { n: string };
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > 40) {
      res.send(400, { message: 'n must be a whole number from 0 to 40' });
      return next();
    }
    res.send({ n, fibonacci: answer(n), pid: process.pid });
    return next();
  });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
