// Wrong: sends ts in seconds (Date.now() / 1000): a client reading it as milliseconds gets January 1970.
// probe: is not the time of the answer
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  const seed = crypto.randomBytes(5000);
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', `"${seed.toString('base64url', 0, 16)}"`);
  res.send({ data: seed.toString('hex'), url: req.url, ts: Math.floor(Date.now() / 1000) });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
