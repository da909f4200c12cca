// The manifest's count of finished work (ExerciseManifest.finishedWork), read as the measured phase starts
// and as it ends: what the services saw finished over the phase, and over how long.
import type { ServiceContexts } from './service.ts';

export class FinishedWork {
  #from = 0;
  #startedAt = 0;

  constructor(
    private readonly read: (services: ServiceContexts) => Promise<number>,
    private readonly services: ServiceContexts,
  ) {}

  async begin(): Promise<void> {
    this.#from = await this.read(this.services);
    this.#startedAt = performance.now();
  }

  async end(): Promise<{ count: number; seconds: number }> {
    const seconds = (performance.now() - this.#startedAt) / 1000;
    return { count: (await this.read(this.services)) - this.#from, seconds };
  }
}
