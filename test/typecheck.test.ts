import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/paths.ts';

describe('types', () => {
  it('the harness, the stages, the ceilings and the tests type-check under strict', () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    // The trainee's own server.ts may be half-written; it is not the workshop's to check.
    const errors = result.stdout
      .split('\n')
      .filter((line) => /error TS\d+/.test(line))
      .filter((line) => !/^exercises\/[^/]+\/server\.ts\(/.test(line));
    expect(errors).toEqual([]);
    expect(result.error).toBeUndefined();
  }, 120_000);
});
