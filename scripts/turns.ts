// Servers measured side by side take turns at the machine: one puts load on it at a time, in the order
// they asked (so, round-robin between servers that each ask again as soon as their turn ends). The
// machine's speed drifts by tens of percent over a minute on a shared host; measured in alternation, the
// servers of one run see the same machine, where one after the other they would not.

export class Turns {
  /** Who waits for the machine, first in line first. */
  private readonly line: Array<() => void> = [];
  private busy = false;
  /** Parties still taking part; `meet` waits for each of them. */
  private active: number;
  private arrived = 0;
  private meeting: Array<() => void> = [];

  constructor(parties: number) {
    this.active = parties;
  }

  /** Runs `work` once the machine is free, alone on it. */
  async take<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.line.push(resolve));
    this.busy = true;
    try {
      return await work();
    } finally {
      const next = this.line.shift();
      if (next) next();
      else this.busy = false;
    }
  }

  /**
   * Waits until every party still taking part has come here too, so what follows runs for all of them
   * in alternation (a ramp's decisive steps, close together in time). Never call it inside `take`.
   */
  async meet(): Promise<void> {
    this.arrived += 1;
    if (this.arrived >= this.active) return this.open();
    await new Promise<void>((resolve) => this.meeting.push(resolve));
  }

  /** A party that is done (or failed) no longer holds up a meeting. */
  leave(): void {
    this.active -= 1;
    if (this.arrived > 0 && this.arrived >= this.active) this.open();
  }

  private open(): void {
    const waiting = this.meeting;
    this.meeting = [];
    this.arrived = 0;
    for (const resolve of waiting) resolve();
  }
}

/** For one server alone: every turn is at once, every meeting immediate. */
export const ALONE = {
  take: <T>(work: () => Promise<T>): Promise<T> => work(),
  meet: async (): Promise<void> => {},
  leave: (): void => {},
} satisfies Pick<Turns, 'take' | 'meet' | 'leave'>;

export type TurnTaker = Pick<Turns, 'take' | 'meet' | 'leave'>;
