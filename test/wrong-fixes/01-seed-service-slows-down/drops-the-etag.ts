// Wrong: fast because the ETag is gone altogether.
// probe: carries an ETag
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  res.send({ data: crypto.randomBytes(5000).toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
