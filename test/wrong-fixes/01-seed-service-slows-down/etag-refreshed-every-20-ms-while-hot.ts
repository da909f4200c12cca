// Wrong: stage 1's guard, and for a URL asked more than 5 times in the last 100 ms it hashes a body into
// the URL's ETag at most once every 20 ms: in between, every new body goes out under the ETag of an
// older one. The probe's URLs are asked three times each, so they never get hot; under load about a
// hundred different bodies share each ETag, though two answers 50 ms apart never do.
// Judged in the author check's run, in turns: beside the other known-wrong fixes' loads it once passed
// (a suite run of 2026-12-08: 1,648 answers, 28 sampled pairs, a third or fewer sharing their ETag).
// in-turns: the ETag is the one the answer just before it had, though the data differ
import crypto from 'node:crypto';
import restify from 'restify';

function sha512Hex(text: string): string {
  return crypto.createHash('sha512').update(text).digest('hex');
}

// Adds Cache-Control and an ETag to every response. The ETag of a URL is remembered after each
// successful response, from a hash of the body that was sent.
function etagger(server: restify.Server): restify.RequestHandler {
  const etags: Record<string, string> = {};
  const hashedAt: Record<string, number> = {};
  const asked: Record<string, number[]> = {};
  const hot = (key: string, now: number): boolean => {
    const times = (asked[key] ??= []);
    times.push(now);
    while (times.length > 0 && times[0]! < now - 100) times.shift();
    return times.length > 5;
  };
  let afterEventAttached = false;

  function attachAfterEvent(): void {
    if (afterEventAttached) return;
    afterEventAttached = true;
    server.on('after', (req: restify.Request, res: restify.Response) => {
      const body: unknown = (res as unknown as { _body?: unknown })._body;
      if (res.statusCode !== 200 || !body) return;
      const key = sha512Hex(req.url ?? '');
      const now = Date.now();
      if (hot(key, now) && now - (hashedAt[key] ?? 0) < 20) return;
      hashedAt[key] = now;
      const etag = `"${sha512Hex(JSON.stringify(body))}"`;
      if (etags[key] !== etag) etags[key] = etag;
    });
  }

  return function etag(req, res, next) {
    attachAfterEvent();
    const key = sha512Hex(req.url ?? '');
    if (key in etags) res.header('ETag', etags[key]);
    res.header('Cache-Control', 'public, max-age=120');
    next();
  };
}

const server = restify.createServer({ name: 'seed-service' });
server.use(etagger(server));

server.get('/seed/v1', (req, res, next) => {
  res.send({ data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`seed service listening on ${server.url}`);
});
