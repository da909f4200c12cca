// The A/B decision itself: which variant of an experiment a user sees. Stable for a user (the same user
// always sees the same button colour) and split about evenly, from a hash of the experiment and the user.
export type Variant = 'A' | 'B';

export interface Decision {
  user: string;
  experiment: string;
  variant: Variant;
}

/** The event recorded for every decision, for the analytics that compare A and B. */
export interface DecisionEvent extends Decision {
  /** Milliseconds since the epoch. */
  decidedAt: number;
}

export const EXPERIMENTS = ['checkout-button', 'pay-later-banner', 'onboarding-layout'];

/** FNV-1a, 32 bits: cheap, stable across processes and Node versions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function assign(user: string, experiment: string): Decision {
  return { user, experiment, variant: fnv1a(`${experiment}:${user}`) % 2 === 0 ? 'A' : 'B' };
}
