// Wrong: keeps each URL's answer for 30 s once the server is busy (after 50 requests), so the load gets
// old bodies with old timestamps.
// under-load: the seed data repeats an earlier answer
import crypto from 'node:crypto';
import restify from 'restify';

let served = 0;
const cache = new Map<string, { at: number; etag: string; body: object }>();
const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  served += 1;
  const url = req.url ?? '';
  let hit = served > 50 ? cache.get(url) : undefined;
  if (!hit || Date.now() - hit.at > 30_000) {
    const seed = crypto.randomBytes(5000);
    hit = { at: Date.now(), etag: `"${seed.toString('base64url', 0, 16)}"`, body: { data: seed.toString('hex'), url, ts: Date.now() } };
    cache.set(url, hit);
  }
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', hit.etag);
  res.send(hit.body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
