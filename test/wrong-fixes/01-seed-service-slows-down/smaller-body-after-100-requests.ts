// Wrong: after 100 requests it draws 500 bytes instead of 5,000: every answer of the load is cheaper,
// and the probe, which comes first, never sees one.
// under-load: data is not 5,000 bytes as hex
import crypto from 'node:crypto';
import restify from 'restify';

let served = 0;
const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  served += 1;
  const seed = crypto.randomBytes(served > 100 ? 500 : 5000);
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', `"${seed.toString('base64url', 0, 16)}"`);
  res.send({ data: seed.toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
