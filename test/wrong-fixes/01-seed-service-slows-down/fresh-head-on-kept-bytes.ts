// Wrong: "randomBytes(5000) per request is the hot spot", so the bulk of the seed is drawn once at start
// and each request gets only a fresh 16-byte head on it. Every answer's data is 10,000 hex characters and
// differs from every other, and 4,984 of its 5,000 bytes are the same in every answer.
// under-load: the seed data agrees with an earlier answer's in over a quarter of its positions
import crypto from 'node:crypto';
import restify from 'restify';

const HEAD_BYTES = 16;
const BULK = crypto.randomBytes(5000 - HEAD_BYTES).toString('hex');

const server = restify.createServer({ name: 'seed-service' });
server.use((_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  next();
});

server.get('/seed/v1', (req, res, next) => {
  const head = crypto.randomBytes(HEAD_BYTES);
  res.header('ETag', `"${head.toString('base64url')}"`);
  res.send({ data: head.toString('hex') + BULK, url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
