// Wrong: the Cache-Control header is dropped along with the middleware.
// probe: Cache-Control is
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  const seed = crypto.randomBytes(5000);
  res.header('ETag', `"${seed.toString('base64url', 0, 16)}"`);
  res.send({ data: seed.toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
