// Wrong: one body built at start-up answers every request, whatever the URL.
// probe: not the URL requested
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
const body = { data: crypto.randomBytes(5000).toString('hex'), url: '/seed/v1', ts: Date.now() };
const etag = `"${crypto.createHash('sha1').update(body.data).digest('hex')}"`;
server.get('/seed/v1', (_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', etag);
  res.send(body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
