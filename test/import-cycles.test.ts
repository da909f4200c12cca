// No module of the harness imports itself back through others, type imports included: a cycle makes the
// order modules load in matter, and says two modules are one. The same check as `npx madge --circular
// --extensions ts scripts`, without the dependency.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/paths.ts';

const SCRIPTS = path.join(ROOT, 'scripts');

function modules(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return modules(file);
    return /\.(ts|js)$/.test(entry.name) ? [file] : [];
  });
}

/** Each module's relative imports and re-exports (`import ... from './x.ts'`, `export ... from`, `import('./x.ts')`). */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);
  return specifiers.map((specifier) => path.resolve(path.dirname(file), specifier));
}

/** Groups of modules that import one another, directly or not (Tarjan's strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const other of graph.get(node) ?? []) {
      if (!graph.has(other)) continue;
      if (!index.has(other)) {
        visit(other);
        low.set(node, Math.min(low.get(node)!, low.get(other)!));
      } else if (stack.includes(other)) low.set(node, Math.min(low.get(node)!, index.get(other)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || graph.get(node)!.includes(node)) found.push(group);
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the harness modules', () => {
  it('import one another without a cycle', () => {
    const graph = new Map(modules(SCRIPTS).map((file) => [file, importsOf(file)]));
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles(graph).map((group) => group.map((file) => path.relative(SCRIPTS, file)).sort())).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph)).toEqual([['c', 'b', 'a']]);
  });
});
