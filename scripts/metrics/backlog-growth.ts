import { integer } from '../format.ts';
import { defineMetric } from '../metric.ts';

/** Per second of the measured phase: answers, less the work the services saw finished (ExerciseManifest.finishedWork). */
export const backlogGrowth = defineMetric({
  id: 'backlogGrowth',
  name: 'backlog growth',
  unit: '/s',
  means:
    "answers per second over the measured phase, less the work handed on (an upload, a message) that the service at the other end saw finished per second: how fast work answered for but not yet done piles up, wherever the server keeps it. It reads below zero when the phase finishes work left over from the warm-up; near zero is a server that keeps up.",
  better: 'lower',
  judged: 'reference',
  // Read around one measured phase: a turn has no count of its own.
  perTurn: false,
  read: (run) => {
    const { load, finishedWork } = run;
    if (!load || !finishedWork || !(finishedWork.seconds > 0)) return undefined;
    return load.requestsPerSecond.mean - finishedWork.count / finishedWork.seconds;
  },
  format: (v) => `${integer(v)}/s`,
  needs: (_load, has) => (has.finishedWork ? undefined : "backlogGrowth needs a count of the work finished (the manifest's finishedWork)"),
});
