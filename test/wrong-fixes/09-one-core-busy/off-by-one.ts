// Wrong: one worker per core, but the recursion starts the sequence at 1, 1 instead of 0, 1. Every n from 1
// up is still right; only n = 0 shows it, which is why the probe asks for the edges.
// probe: fibonacci(0) is 0
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

function fibonacci(n: number): number {
  return n <= 2 ? 1 : fibonacci(n - 1) + fibonacci(n - 2);
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
