// The kinds of problem `workshop doctor` names (diagnose.ts says from which figures).
export const KINDS = ['cost-grows', 'memory-grows', 'gc', 'waiting', 'cpu-bound', 'one-core'] as const;
export type Kind = (typeof KINDS)[number];
