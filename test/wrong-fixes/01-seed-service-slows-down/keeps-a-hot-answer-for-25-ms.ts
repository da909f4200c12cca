// Wrong: micro-caching. While a URL is hot (more than 10 requests in this 100 ms or the one before), its
// whole answer (seed, ETag, ts) is kept for 25 ms and handed to everyone who asks in that window; a URL
// asked for now and then, as the probe's are, always gets a fresh one. Shorter than the interval between
// two steady samples, it shows between the two answers of a sampled pair.
// under-load: the seed data repeats an earlier answer's
import crypto from 'node:crypto';
import restify from 'restify';

const KEEP_MS = 25;
const HOT_AT = 10;
const BUCKET_MS = 100;

const asked = new Map<string, { bucket: number; count: number; before: number }>();
function hot(url: string, now: number): boolean {
  const bucket = Math.floor(now / BUCKET_MS);
  const seen = asked.get(url) ?? { bucket, count: 0, before: 0 };
  if (seen.bucket !== bucket) Object.assign(seen, { before: seen.bucket === bucket - 1 ? seen.count : 0, bucket, count: 0 });
  seen.count += 1;
  asked.set(url, seen);
  return seen.count > HOT_AT || seen.before > HOT_AT;
}

const kept = new Map<string, { at: number; etag: string; body: { data: string; url: string; ts: number } }>();

const server = restify.createServer({ name: 'seed-service' });
server.use((_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  next();
});

server.get('/seed/v1', (req, res, next) => {
  const url = req.url ?? '';
  const now = Date.now();
  let answer = hot(url, now) ? kept.get(url) : undefined;
  if (!answer || now - answer.at >= KEEP_MS) {
    const seed = crypto.randomBytes(5000);
    answer = { at: now, etag: `"${seed.toString('base64url', 0, 16)}"`, body: { data: seed.toString('hex'), url, ts: now } };
    kept.set(url, answer);
  }
  res.header('ETag', answer.etag);
  res.send(answer.body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
