// Wrong: writes the JSON itself with res.end and no Content-Type: faster, and a client that trusts the
// header no longer parses it.
// probe: not application/json
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  const seed = crypto.randomBytes(5000);
  res.writeHead(200, { 'Cache-Control': 'public, max-age=120', ETag: `"${seed.toString('base64url', 0, 16)}"` });
  res.end(JSON.stringify({ data: seed.toString('hex'), url: req.url, ts: Date.now() }));
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
