// Wrong: one worker per core, and each worker remembers every answer it has computed. The answers are
// right and the knee goes through the roof, but the recursion stands for work that cannot be cached (a
// price, a render, a signature): after the first request for an n, no request does any work.
// probe: every request does the work
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

const memo = new Map<number, number>();
function fibonacci(n: number): number {
  if (n < 2) return n;
  let known = memo.get(n);
  if (known === undefined) memo.set(n, (known = fibonacci(n - 1) + fibonacci(n - 2)));
  return known;
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
    res.send({ n, fibonacci: fibonacci(n), pid: process.pid });
    return next();
  });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
