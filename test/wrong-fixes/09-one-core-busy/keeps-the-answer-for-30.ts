// Wrong: one worker per core, and each keeps the answer for the n the dashboards ask about most (30, the
// load's) once it has computed it; every other n is computed as before. The probe's timed n (35) still does
// the work, and the load's answers do none.
// probe: every request does the work: fibonacci(30) takes at least
import cluster from 'node:cluster';
import os from 'node:os';
import restify from 'restify';

function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

const HOT_N = 30;
let hot: number | undefined;

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
    const value = n === HOT_N ? (hot ??= fibonacci(n)) : fibonacci(n);
    res.send({ n, fibonacci: value, pid: process.pid });
    return next();
  });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
