// Two CPU profiles of one exercise (cpu-tree.ts) as one tree for a differential flame graph: each frame
// with its time per answer on both sides, so that a page can draw the first side's shape and colour each
// frame by what changed. Time per answer, not per second: a faster server answers more, and a frame that
// takes the same share of a faster server's time costs less per answer.
import type { Frame, FrameKind } from './cpu-tree.ts';

export interface DiffFrame {
  name: string;
  file: string;
  line: number;
  column: number;
  kind: FrameKind;
  /** Microseconds per answer with this frame on the stack, on each side; 0 where the side has no such frame. */
  before: number;
  after: number;
  beforeSelf: number;
  afterSelf: number;
  children: DiffFrame[];
}

/** A function's self time per answer on both sides, over all its call paths. */
export interface FunctionChange {
  name: string;
  file: string;
  kind: FrameKind;
  before: number;
  after: number;
}

/**
 * The key that matches a frame of one side with the other's. Your own code is matched by its function's
 * name alone: the two sides are different files (the shipped server and a fix), so lines differ. Node's
 * and packages' frames, and V8's, by name and file.
 */
function keyOf(frame: { name: string; file: string; kind: FrameKind }): string {
  return frame.kind === 'app' ? `app\u0000${frame.name}` : `${frame.kind}\u0000${frame.name}\u0000${frame.file}`;
}

/** The two trees merged along their call paths; each side's times divided by its answers. */
export function diffTrees(before: Frame, beforeAnswers: number, after: Frame, afterAnswers: number): DiffFrame {
  const per = (us: number, answers: number) => (answers > 0 ? us / answers : 0);
  const merge = (a: Frame | undefined, b: Frame | undefined): DiffFrame => {
    const shape = (a ?? b)!;
    const node: DiffFrame = {
      name: shape.name,
      file: shape.file,
      line: shape.line,
      column: shape.column,
      kind: shape.kind,
      before: a ? per(a.total, beforeAnswers) : 0,
      after: b ? per(b.total, afterAnswers) : 0,
      beforeSelf: a ? per(a.self, beforeAnswers) : 0,
      afterSelf: b ? per(b.self, afterAnswers) : 0,
      children: [],
    };
    const sides = new Map<string, { a?: Frame; b?: Frame }>();
    for (const child of a?.children ?? []) sides.set(keyOf(child), { ...sides.get(keyOf(child)), a: sum(sides.get(keyOf(child))?.a, child) });
    for (const child of b?.children ?? []) sides.set(keyOf(child), { ...sides.get(keyOf(child)), b: sum(sides.get(keyOf(child))?.b, child) });
    node.children = [...sides.values()].map(({ a: ca, b: cb }) => merge(ca, cb)).sort((x, y) => y.before - x.before || y.after - x.after);
    return node;
  };
  return merge(before, after);
}

/** Two frames of one side under one key (two anonymous functions of your file) as one. */
function sum(existing: Frame | undefined, frame: Frame): Frame {
  if (!existing) return frame;
  return { ...existing, self: existing.self + frame.self, total: existing.total + frame.total, children: [...existing.children, ...frame.children] };
}

/** Each function's self time per answer on both sides, summed over its call paths; largest change first. */
export function functionChanges(tree: DiffFrame, count = 20): FunctionChange[] {
  const byKey = new Map<string, FunctionChange>();
  const visit = (frame: DiffFrame) => {
    if (frame !== tree) {
      const key = keyOf(frame);
      const change = byKey.get(key) ?? { name: frame.name, file: frame.file, kind: frame.kind, before: 0, after: 0 };
      change.before += frame.beforeSelf;
      change.after += frame.afterSelf;
      byKey.set(key, change);
    }
    frame.children.forEach(visit);
  };
  visit(tree);
  return [...byKey.values()].sort((x, y) => Math.abs(y.after - y.before) - Math.abs(x.after - x.before)).slice(0, count);
}

/**
 * Time per answer in frames that match (`name` exactly, `file` as part of the path) and below them, on
 * each side: the outermost match on each path counts, as shareOf does for one profile.
 */
export function perAnswerOf(tree: DiffFrame, match: { name?: string; file?: string }): { before: number; after: number } {
  const matches = (frame: DiffFrame) => (match.name === undefined || frame.name === match.name) && (match.file === undefined || frame.file.includes(match.file));
  const total = { before: 0, after: 0 };
  const visit = (frame: DiffFrame) => {
    if (frame !== tree && matches(frame)) {
      total.before += frame.before;
      total.after += frame.after;
      return;
    }
    frame.children.forEach(visit);
  };
  visit(tree);
  return total;
}
