// Wrong: a megabyte of random bytes is drawn once at start, as hex; each answer's data is a 10,000-character
// window of it at a random offset. No answer's bytes are drawn for it: every answer is a slice of the same
// pool, shifted, so any two answers that overlap share thousands of bytes, only not at the same positions.
// under-load: holds a run of 31 characters or more of an earlier answer's
import crypto from 'node:crypto';
import restify from 'restify';

const POOL = crypto.randomBytes(1_000_000).toString('hex');
const WINDOWS = (POOL.length - 10_000) / 2;
let served = 0;

const server = restify.createServer({ name: 'seed-service' });
server.use((_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  next();
});

server.get('/seed/v1', (req, res, next) => {
  const at = 2 * crypto.randomInt(WINDOWS);
  res.header('ETag', `"${at}-${++served}"`);
  res.send({ data: POOL.slice(at, at + 10_000), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
