// Wrong: stage 1's guard, and for a URL asked more than 5 times in this second and the one before, it
// sends no ETag and hashes nothing; a URL asked less often gets its ETag. The probe asks each of its URLs
// at most three times, before the load and after it; a client of the hot URL can no longer revalidate.
// under-load: no ETag
import crypto from 'node:crypto';
import restify from 'restify';

const LOADED_AT = 5;

function sha512Hex(text: string): string {
  return crypto.createHash('sha512').update(text).digest('hex');
}

/** How often each URL was asked for in this second and the one before: more than LOADED_AT is hot. */
const asked = new Map<string, { second: number; count: number; before: number }>();
function hot(url: string): boolean {
  const second = Math.floor(Date.now() / 1000);
  const seen = asked.get(url) ?? { second, count: 0, before: 0 };
  if (seen.second !== second) Object.assign(seen, { before: seen.second === second - 1 ? seen.count : 0, second, count: 0 });
  seen.count += 1;
  asked.set(url, seen);
  return seen.count + seen.before > LOADED_AT;
}

const etags: Record<string, string> = {};
const server = restify.createServer({ name: 'seed-service' });
server.on('after', (req: restify.Request, res: restify.Response) => {
  const body: unknown = (res as unknown as { _body?: unknown })._body;
  if (res.statusCode !== 200 || !body || (res as unknown as { busy?: boolean }).busy) return;
  etags[sha512Hex(req.url ?? '')] = `"${sha512Hex(JSON.stringify(body))}"`;
});
server.use((req, res, next) => {
  if (hot(req.url ?? '')) (res as unknown as { busy?: boolean }).busy = true;
  else {
    const key = sha512Hex(req.url ?? '');
    if (key in etags) res.header('ETag', etags[key]);
  }
  res.header('Cache-Control', 'public, max-age=120');
  next();
});

server.get('/seed/v1', (req, res, next) => {
  res.send({ data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
