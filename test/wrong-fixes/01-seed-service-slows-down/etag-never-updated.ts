// Wrong: the ETag of a URL is computed once and never follows the body.
// probe: the ETag changes when the body changes
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
const etags = new Map<string, string>();
server.get('/seed/v1', (req, res, next) => {
  const body = { data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() };
  if (!etags.has(req.url!)) etags.set(req.url!, `"${crypto.createHash('sha1').update(body.data).digest('hex')}"`);
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', etags.get(req.url!));
  res.send(body);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
