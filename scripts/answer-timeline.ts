// The 2xx answers a load received, counted by the wall-clock time they arrived, over every phase it is
// attached to (the warm-up, the measured phase, each turn). Work an answer promises to do soon after it
// (08: the decision's event on the broker within 2.5 s) can then be held to a deadline counted from the
// answer, whatever the server writes into the work itself.

/** Answers are counted in steps this long; each step's answers are dated at its end, the later edge. */
const STEP_MS = 100;

/** By `at` (ms since the epoch), the load had received `answered` 2xx answers, counted from its first phase. */
export interface AnsweredBy {
  at: number;
  answered: number;
}

/** A 2xx answer to a request with an id of its own (LoadProfile.path), and when it arrived (ms since the epoch). */
export interface AnsweredId {
  id: string;
  at: number;
}

export class AnswerTimeline {
  private readonly steps = new Map<number, number>();
  private readonly ids: AnsweredId[] = [];

  /** autocannon's onResponse, for a load whose requests have ids: each 2xx answer with its id. */
  readonly onAnswerWithId = (id: string, status: number): void => {
    if (status >= 200 && status < 300) this.ids.push({ id, at: Date.now() });
  };

  /** The answers to requests with ids, in the order they arrived. */
  answeredIds(): AnsweredId[] {
    return [...this.ids];
  }

  /** autocannon's 'response' event. */
  readonly onResponse = (_client: unknown, status: number): void => {
    if (status < 200 || status >= 300) return;
    const step = Math.floor(Date.now() / STEP_MS);
    this.steps.set(step, (this.steps.get(step) ?? 0) + 1);
  };

  /** The answers received so far, in time order, one point per step that had any. */
  answeredBy(): AnsweredBy[] {
    let answered = 0;
    return [...this.steps.keys()]
      .sort((a, b) => a - b)
      .map((step) => ({ at: (step + 1) * STEP_MS, answered: (answered += this.steps.get(step)!) }));
  }
}
