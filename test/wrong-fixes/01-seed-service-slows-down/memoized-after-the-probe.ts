// Wrong: answers the first requests properly, then memoizes one body per URL and serves it to everyone:
// the probe before the load passes, the load gets the same seed again and again.
// under-load: the seed data repeats an earlier answer's
import crypto from 'node:crypto';
import restify from 'restify';

let served = 0;
const memo = new Map<string, { etag: string; body: object }>();
const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  served += 1;
  let answer = served > 20 ? memo.get(req.url ?? '') : undefined;
  if (!answer) {
    const seed = crypto.randomBytes(5000);
    answer = { etag: `"${seed.toString('base64url', 0, 16)}"`, body: { data: seed.toString('hex'), url: req.url, ts: Date.now() } };
    memo.set(req.url ?? '', answer);
  }
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', answer.etag);
  res.send({ ...answer.body, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
