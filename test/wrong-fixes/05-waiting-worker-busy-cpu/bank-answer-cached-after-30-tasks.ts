// Wrong: once it has run 30 tasks, it keeps the bank's answer for each task id and serves a task it has
// seen from there: no wait on the bank, and the same balances each time the scheduler sends the task again.
// under-load: the set of balances repeats an earlier answer's
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve, type BankAnswer } from './lib/worker.ts';

let tasksRun = 0;
const bankAnswers = new Map<string, BankAnswer>();
serve(pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)), {
  async bank(task, refresh) {
    const answer = bankAnswers.get(task.taskId) ?? (await refresh(task));
    if (++tasksRun > 30) bankAnswers.set(task.taskId, answer);
    return answer;
  },
});
