// Exercise 06's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/06-app-slows-by-the-hour/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { throughputKept } from '../../scripts/metrics/throughput-kept.ts';

export default defineSolution({
  stages: [
    {
      file: '1-replace-the-router.ts',
      title: 'replace the router',
      changes:
        "The static files, the status route and one dispatching layer are mounted once, at start, and each reload builds a fresh express.Router() from the new table and swaps it in, instead of mounting the whole site again.",
      targets: [
        { metric: throughputKept, against: 'itself', atLeast: 0.6 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 5 },
      ],
    },
  ],
  profile: {
    lookFor:
      "Half to three quarters of the samples sit under `serveStatic` (serve-static) and send's stream, and from about a third to two thirds under the native `stat` of node:fs at their top. Every copy of the static handler that a reload left in front of the API routes looks for the API path on disk, finds nothing and passes the request on, so each request pays one `stat` per copy; the API's own handler in site.ts is under a tenth. A profile adds up the whole run, so the growth itself shows better in the per-second figures of `run 06 --load` and the layer count of `/_routes`.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "serveStatic", atLeast: 0.32 },
      { name: "stat", file: "node:fs", atLeast: 0.2 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'cost-grows', final: [] },
  hints: [
    'Watch the trend, not the average: `npm run workshop -- run 06 --load` shows, while it runs, the requests answered in the last second (`--json` lists every second). With the same load, does the server stay as fast as it was in its first seconds? Then ask it how it is doing: `curl -s http://127.0.0.1:3000/_routes` a few times while it runs (`run 06` without `--load`). Which of its figures grows, and how fast? How many layers would you expect for seven API routes, a status route and a static folder?',
    "Profile it under load (README.md, \"How to see it\"): the widest frames are not the page handler. Netflix's flame graphs were full of Express's `route.handle` and `route.handle.next`: Express keeps the app's layers in one array and walks it in order for every request until one answers. In yours, look for the router (`next`, `handle`, `trimPrefix`), `serveStatic` and `send`'s `SendStream` (`pipe`, `sendFile`, `onStatError`), and count how many of them one API request goes through. Why would a request for /api/pages/home ask the static-file middleware anything, let alone many times?",
    "Measured with `node --cpu-prof` (the shipped server, 10 s of the exercise's load) on two 2-core machines: 71-85% of the busy samples lie under the router's `next`, 53-75% under `serveStatic` and `send`'s `pipe` and `sendFile`, 34-69% in `fs.stat` itself; the page handler is 6-9%. Read one stack from the bottom: a `stat` callback (`onstat`) gets ENOENT, `send` turns it into a 404 error, serve-static hands that to the router as `next()`, and the router's `next` calls... `serveStatic` again. Each copy waits for the disk before it calls `next()`, so the stack starts again from the callback each time: the tower is wide, not tall, the same few frames once for every copy.",
    'Print `app.router.stack.map((layer) => layer.name)` once a second. What comes before the API routes, and how many of it are there after 100 reloads? Netflix logged the same array and found it growing by 10 identical entries an hour, one per refresh of their routes. Read `reloadRoutes`: it removes the layers that have a `.route` (the ones `app.get` makes). What does `mountSite` add that has no `.route`?',
    'Mount what never changes once, at start: the static files and the /_routes status. Give the API routes their own `express.Router()`, built from each new table, and let one layer mounted at start hand every request to the latest one: `app.use((req, res, next) => api(req, res, next))`, then on reload `api = buildApi(next)`. Mounting the router object itself (`app.use(api)`) would keep the first one forever.',
  ],
});
