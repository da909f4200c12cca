import { describe, expect, it } from 'vitest';
import { ALONE, Turns } from '../scripts/turns.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('turns', () => {
  it('lets one party at a time use the machine, in turn', async () => {
    const turns = new Turns(3);
    const log: string[] = [];
    let inside = 0;
    const party = async (name: string, steps: number) => {
      for (let i = 0; i < steps; i++) {
        await turns.take(async () => {
          inside += 1;
          expect(inside).toBe(1);
          log.push(`${name}${i}`);
          await tick();
          inside -= 1;
        });
      }
      turns.leave();
    };
    await Promise.all([party('a', 3), party('b', 2), party('c', 3)]);
    // Round-robin while all three ask; the ones left carry on without waiting for the ones done.
    expect(log).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'c2']);
  });

  it('passes an error on and frees the machine for the next one', async () => {
    const turns = new Turns(2);
    const failing = turns.take(async () => {
      throw new Error('step failed');
    });
    const next = turns.take(async () => 'ran');
    await expect(failing).rejects.toThrow('step failed');
    await expect(next).resolves.toBe('ran');
  });

  it('meets: each waits until every party still taking part has arrived, or left', async () => {
    const turns = new Turns(3);
    const log: string[] = [];
    const climb = async (name: string, steps: number, fails = false) => {
      for (let i = 0; i < steps; i++) await turns.take(async () => void log.push(`${name} climbs`));
      if (fails) return turns.leave();
      await turns.meet();
      await turns.take(async () => void log.push(`${name} settles`));
      turns.leave();
    };
    await Promise.all([climb('a', 1), climb('b', 3), climb('c', 2, true)]);
    // No settle before the last climb; c failed during its climb and held nobody up.
    const lastClimb = log.lastIndexOf('b climbs');
    expect(log.findIndex((entry) => entry.endsWith('settles'))).toBeGreaterThan(lastClimb);
    expect(log.filter((entry) => entry.endsWith('settles')).sort()).toEqual(['a settles', 'b settles']);
  });

  it('alone: every turn at once, every meeting open', async () => {
    await ALONE.meet();
    await expect(ALONE.take(async () => 42)).resolves.toBe(42);
  });
});
