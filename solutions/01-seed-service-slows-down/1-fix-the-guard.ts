// Exercise 01, stage 1: fix the guard.
// Why and what it measured: solutions/01-seed-service-slows-down/README.md.
import crypto from 'node:crypto';
import restify from 'restify';

function sha512Hex(text: string): string {
  return crypto.createHash('sha512').update(text).digest('hex');
}

// Adds Cache-Control and an ETag to every response. The ETag of a URL is remembered after each
// successful response, from a hash of the body that was sent.
function etagger(server: restify.Server): restify.RequestHandler {
  const etags: Record<string, string> = {};
  let afterEventAttached = false;

  function attachAfterEvent(): void {
    if (afterEventAttached) return;
    afterEventAttached = true;
    server.on('after', (req: restify.Request, res: restify.Response) => {
      const body: unknown = (res as unknown as { _body?: unknown })._body;
      if (res.statusCode !== 200 || !body) return;
      const key = sha512Hex(req.url ?? '');
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
