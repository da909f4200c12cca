// Exercise 09: the server that keeps one core busy.
// A restify service that does CPU work for every request: GET /fibonacci/<n> computes the n-th Fibonacci
// number recursively, as the article's test service did, standing in for real work (a price, a render, a
// signature). It answers in milliseconds at low load and takes far longer past some request rate. Find
// that rate (see README.md), then make this file answer more requests per second on the same machine,
// without making the work itself cheaper.
import restify from 'restify';

/** The work one request stands for. It stays exactly as it is (see README.md). */
function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

// fibonacci(40) takes about a second here; anything larger would let one request hold the service.
const MAX_N = 40;

const server = restify.createServer({ name: 'fibonacci' });

server.get('/fibonacci/:n', (req, res, next) => {
  const { n: text } = req.params as { n: string };
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > MAX_N) {
    res.send(400, { message: `n must be a whole number from 0 to ${MAX_N}, got ${JSON.stringify(text)}` });
    return next();
  }
  res.send({ n, fibonacci: fibonacci(n), pid: process.pid });
  return next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`fibonacci service (pid ${process.pid}) listening on ${server.url}`);
});
