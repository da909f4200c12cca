// Turns a V8 CPU profile (what `node --cpu-prof` writes) into the tree a flame graph draws: one frame per
// distinct function on each call path, with the time spent in it (self) and under it (total).
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SourceMapData } from '../probe/messages.ts';

/** The .cpuprofile format (Chrome DevTools protocol, Profiler.Profile). Times in microseconds. */
export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  /** The node on top of the stack at each sample. */
  samples?: number[];
  /** Microseconds since the previous sample (the first: since startTime). */
  timeDeltas?: number[];
}

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Where a frame's code is: the exercise's own, a package, Node's own JavaScript, or V8/native. */
export type FrameKind = 'app' | 'dependency' | 'node' | 'native';

export interface Frame {
  /** The function's name; "(anonymous)" for an unnamed one; V8's own entries look like "(garbage collector)". */
  name: string;
  /** Relative to the repository for its files, "node:events" for Node's, "" for native code. */
  file: string;
  /** 1-based; 0 when unknown. Mapped to the TypeScript source when a source map was given. */
  line: number;
  column: number;
  kind: FrameKind;
  /** Microseconds with this frame on top of the stack. */
  self: number;
  /** Microseconds with this frame anywhere on the stack: self plus the children's totals. */
  total: number;
  children: Frame[];
}

/** A position in the original source, for a 0-based position in the code V8 ran (e.g. via a source map). */
export type Locate = (url: string, line: number, column: number) => { line: number; column: number } | undefined;

/** Locates positions through the source maps the server held for its files (by file URL). */
export function locateWith(maps: Record<string, SourceMapData>): Locate {
  const parsed = new Map<string, SourceMap>();
  return (url, line, column) => {
    const data = maps[url];
    if (!data) return undefined;
    const map = parsed.get(url) ?? new SourceMap({ file: '', sourceRoot: '', sourcesContent: [], ...data });
    parsed.set(url, map);
    const entry = map.findEntry(line, column);
    return 'originalLine' in entry ? { line: entry.originalLine + 1, column: entry.originalColumn + 1 } : undefined;
  };
}

export interface TreeOptions {
  /** Maps positions in transpiled files back to their source. */
  locate?: Locate;
  /** Repository root: file paths under it are shown relative to it. */
  root?: string;
}

/**
 * The profile as a tree rooted at "(root)". V8 can record the same function twice under one parent
 * (e.g. before and after it was optimized); such siblings are merged. Children are sorted widest first.
 */
export function profileToTree(profile: CpuProfile, options: TreeOptions = {}): Frame {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfById = selfTimes(profile);
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []));
  const rootNode = profile.nodes.find((node) => !childIds.has(node.id));
  if (!rootNode) throw new Error('the CPU profile has no root node');

  const convert = (node: CpuProfileNode): Frame => {
    const frame = frameOf(node, options);
    frame.self = selfById.get(node.id) ?? 0;
    for (const childId of node.children ?? []) {
      const child = byId.get(childId);
      if (child) addChild(frame, convert(child));
    }
    return frame;
  };
  const tree = convert(rootNode);
  finish(tree);
  return tree;
}

/** One tree of several (each process's), built into the first: the same call paths merged, their times summed. */
export function mergeTrees(trees: Frame[]): Frame {
  const [first, ...rest] = trees;
  if (!first) throw new Error('no tree to merge');
  for (const tree of rest) {
    first.self += tree.self;
    for (const child of tree.children) addChild(first, child);
  }
  finish(first);
  return first;
}

/**
 * Time per node: each sample lasts until the next one, the last until the profile's end (as Chrome
 * DevTools counts). Without samples, the hit counts share the profile's duration.
 */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  const add = (id: number, us: number) => self.set(id, (self.get(id) ?? 0) + Math.max(0, us));
  const { samples = [], timeDeltas = [] } = profile;
  if (samples.length > 0 && timeDeltas.length === samples.length) {
    let time = profile.startTime;
    const times = timeDeltas.map((delta) => (time += delta));
    samples.forEach((id, i) => add(id, (i + 1 < times.length ? times[i + 1]! : profile.endTime) - times[i]!));
    return self;
  }
  const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const perHit = hits > 0 ? (profile.endTime - profile.startTime) / hits : 0;
  for (const node of profile.nodes) if (node.hitCount) add(node.id, node.hitCount * perHit);
  return self;
}

function frameOf(node: CpuProfileNode, options: TreeOptions): Frame {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  const known = lineNumber >= 0;
  const located = known ? options.locate?.(url, lineNumber, columnNumber) : undefined;
  return {
    name: functionName || (url ? '(anonymous)' : '(native)'),
    file: displayFile(url, options.root),
    line: located ? located.line : known ? lineNumber + 1 : 0,
    column: located ? located.column : known ? columnNumber + 1 : 0,
    kind: kindOf(url),
    self: 0,
    total: 0,
    children: [],
  };
}

export function kindOf(url: string): FrameKind {
  if (url.startsWith('node:')) return 'node';
  if (!url.startsWith('file://') && !path.isAbsolute(url)) return 'native'; // "", wasm://, V8's own entries
  return /[\\/]node_modules[\\/]/.test(url) ? 'dependency' : 'app';
}

function displayFile(url: string, root?: string): string {
  if (!url.startsWith('file://') && !path.isAbsolute(url)) return url;
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (!root) return file;
  const relative = path.relative(root, file);
  return relative.startsWith('..') ? file : relative;
}

const sameFunction = (a: Frame, b: Frame) => a.name === b.name && a.file === b.file && a.line === b.line && a.column === b.column;

/** Adds a child, merging it into a sibling for the same function. */
function addChild(parent: Frame, child: Frame): void {
  const twin = parent.children.find((sibling) => sameFunction(sibling, child));
  if (!twin) {
    parent.children.push(child);
    return;
  }
  twin.self += child.self;
  for (const grandchild of child.children) addChild(twin, grandchild);
}

function finish(frame: Frame): number {
  frame.total = frame.self + frame.children.reduce((sum, child) => sum + finish(child), 0);
  frame.children.sort((a, b) => b.total - a.total);
  return frame.total;
}

/** Every frame of the tree, depth first, with its depth. */
export function* walk(frame: Frame, depth = 0): Generator<{ frame: Frame; depth: number }> {
  yield { frame, depth };
  for (const child of frame.children) yield* walk(child, depth + 1);
}

export interface HotFunction {
  name: string;
  file: string;
  line: number;
  kind: FrameKind;
  /** Microseconds on top of the stack, summed over every call path. */
  self: number;
}

/** The functions that spent the most time on top of the stack, over all their call paths. */
export function hottestFunctions(tree: Frame, count = 15): HotFunction[] {
  const byFunction = new Map<string, HotFunction>();
  for (const { frame } of walk(tree)) {
    if (frame === tree || frame.self === 0) continue;
    const key = `${frame.name}\u0000${frame.file}\u0000${frame.line}`;
    const hot = byFunction.get(key) ?? { name: frame.name, file: frame.file, line: frame.line, kind: frame.kind, self: 0 };
    hot.self += frame.self;
    byFunction.set(key, hot);
  }
  return [...byFunction.values()].sort((a, b) => b.self - a.self).slice(0, count);
}

/**
 * The share of all samples spent in frames that match (`name` exactly, `file` as a part of the path) and
 * below them: the outermost match on each path counts, so a function that calls itself is counted once.
 */
export function shareOf(tree: Frame, match: { name?: string; file?: string }): number {
  const matches = (frame: Frame) => (match.name === undefined || frame.name === match.name) && (match.file === undefined || frame.file.includes(match.file));
  const sum = (frame: Frame): number => (frame !== tree && matches(frame) ? frame.total : frame.children.reduce((total, child) => total + sum(child), 0));
  return tree.total > 0 ? sum(tree) / tree.total : 0;
}
