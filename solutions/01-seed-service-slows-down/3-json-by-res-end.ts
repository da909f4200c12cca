// Exercise 01, stage 3: the route writes its JSON by res.end.
// Why and what it measured: solutions/01-seed-service-slows-down/README.md.
import crypto from 'node:crypto';
import restify from 'restify';

function cacheControl(): restify.RequestHandler {
  return function cacheControl(_req, res, next) {
    res.header('Cache-Control', 'public, max-age=120');
    next();
  };
}

const server = restify.createServer({ name: 'seed-service' });
server.use(cacheControl());

server.get('/seed/v1', (req, res, next) => {
  const seed = crypto.randomBytes(5000);
  const body = JSON.stringify({ data: seed.toString('hex'), url: req.url, ts: Date.now() });
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ETag: `"${seed.toString('base64url', 0, 16)}"`,
  });
  res.end(body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
