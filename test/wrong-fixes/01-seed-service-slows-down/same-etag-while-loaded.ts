// Wrong: stage 1's guard, and while more than 10 requests arrived in the last 10 ms it hashes nothing and
// sends the ETag it had before; when it is quiet, each body's hash becomes the next ETag. The probe,
// before the load and after it, meets a quiet server; under load, one ETag stands for every new body.
// under-load: the ETag stays the same from answer to answer
import crypto from 'node:crypto';
import restify from 'restify';

const WINDOW_MS = 10;
const LOADED_AT = 10;

function sha512Hex(text: string): string {
  return crypto.createHash('sha512').update(text).digest('hex');
}

const arrivals: number[] = [];
function loaded(): boolean {
  const now = Date.now();
  arrivals.push(now);
  while (arrivals.length > 0 && arrivals[0]! < now - WINDOW_MS) arrivals.shift();
  return arrivals.length > LOADED_AT;
}

const etags: Record<string, string> = {};
const server = restify.createServer({ name: 'seed-service' });
server.on('after', (req: restify.Request, res: restify.Response) => {
  const body: unknown = (res as unknown as { _body?: unknown })._body;
  if (res.statusCode !== 200 || !body || (res as unknown as { busy?: boolean }).busy) return;
  etags[sha512Hex(req.url ?? '')] = `"${sha512Hex(JSON.stringify(body))}"`;
});
server.use((req, res, next) => {
  if (loaded()) (res as unknown as { busy?: boolean }).busy = true;
  const key = sha512Hex(req.url ?? '');
  if (key in etags) res.header('ETag', etags[key]);
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
