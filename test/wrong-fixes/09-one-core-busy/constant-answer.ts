// Wrong: "caches" the result under one key for every n, so every request gets the first answer computed.
// probe: fibonacci(10) is 55
import restify from 'restify';

function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

let cached: number | undefined;
const server = restify.createServer({ name: 'fibonacci' });
server.get('/fibonacci/:n', (req, res, next) => {
  const { n: text } = req.params as { n: string };
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 40) {
    res.send(400, { message: 'n must be a whole number from 0 to 40' });
    return next();
  }
  cached ??= fibonacci(n);
  res.send({ n, fibonacci: cached, pid: process.pid });
  return next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
