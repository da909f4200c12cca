// The A/B tests the decision service assigns, as the experiment registry (the upstream API) serves them,
// and the assignment rule. Shared by the service and the correctness probe, which checks every answer
// against it. Not the bug: leave it as it is.
import { createHash } from 'node:crypto';

export interface Variant {
  name: string;
  /** Share of users, in percent; the weights of an experiment add up to 100. */
  weight: number;
}

export interface Experiment {
  name: string;
  variants: Variant[];
}

/** The registry's answers as the workshop starts them, by path. The probe changes them to check a ramp-up applies at once. */
export const REGISTRY: Record<string, Experiment> = {
  '/experiments/checkout-button': {
    name: 'checkout-button',
    variants: [
      { name: 'grey', weight: 50 },
      { name: 'green', weight: 50 },
    ],
  },
  '/experiments/search-ranking': {
    name: 'search-ranking',
    variants: [
      { name: 'bm25', weight: 80 },
      { name: 'learned', weight: 20 },
    ],
  },
};

/** A user's bucket in an experiment, 0-99: the same user always lands in the same bucket. */
export function bucketOf(experiment: string, user: string): number {
  return createHash('sha1').update(`${experiment}:${user}`).digest().readUInt32BE(0) % 100;
}

/** The variant a user gets: the first whose running total of weights passes the user's bucket. */
export function assign(experiment: Experiment, user: string): string {
  const bucket = bucketOf(experiment.name, user);
  let total = 0;
  for (const variant of experiment.variants) {
    total += variant.weight;
    if (bucket < total) return variant.name;
  }
  return experiment.variants.at(-1)!.name;
}
