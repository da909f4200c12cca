// Wrong: once it has served 100 requests it sheds load with a small error body, sent with status 200 so
// that the load generator counts it as answered.
// under-load: data is not 5,000 bytes as hex
import crypto from 'node:crypto';
import restify from 'restify';

let served = 0;
const server = restify.createServer({ name: 'seed-service' });
server.get('/seed/v1', (req, res, next) => {
  served += 1;
  res.header('Cache-Control', 'public, max-age=120');
  if (served > 100 && served % 2 === 0) {
    res.send(200, { error: 'busy, try again' });
    return next();
  }
  const seed = crypto.randomBytes(5000);
  res.header('ETag', `"${seed.toString('base64url', 0, 16)}"`);
  res.send({ data: seed.toString('hex'), url: req.url, ts: Date.now() });
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
