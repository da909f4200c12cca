// Wrong: "takes the work off the request path": the answer goes out at once and the Fibonacci number is
// computed after it, into an object that has already been sent without it.
// probe: fibonacci(30) is 832040
import restify from 'restify';

function fibonacci(n: number): number {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

const server = restify.createServer({ name: 'fibonacci' });
server.get('/fibonacci/:n', (req, res, next) => {
  const { n: text } = req.params as { n: string };
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 40) {
    res.send(400, { message: 'n must be a whole number from 0 to 40' });
    return next();
  }
  const answer: { n: number; fibonacci?: number; pid: number } = { n, pid: process.pid };
  setImmediate(() => {
    answer.fibonacci = fibonacci(n);
  });
  res.send(answer);
  return next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
