// The ceiling for exercise 01: bare restify answering GET /seed/v1 with the same payload, written by the
// framework's fastest path (the JSON string straight to Node's res.end), and nothing else: no middleware,
// no ETag, no Cache-Control. No fix can beat it by much, so the last stage is measured against it.
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });

server.get('/seed/v1', (req, res, next) => {
  const body = JSON.stringify({ data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() });
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
