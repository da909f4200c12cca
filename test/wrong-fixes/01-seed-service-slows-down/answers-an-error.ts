// Wrong: answers fast with an error.
// probe: answers 200
import crypto from 'node:crypto';
import restify from 'restify';

const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (_req, res, next) => {
  res.header('Cache-Control', 'public, max-age=120');
  res.send(503, { message: 'busy' });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
