// Wrong: answers fast with an empty body.
// probe: data is not 5,000 bytes as hex
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
let version = 0;
server.get('/seed/v1', (_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  res.header('ETag', `"${++version}-${crypto.randomUUID()}"`);
  res.send({});
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
