// The freed-slot pass's de-duplication: one run per key at a time, requests meanwhile folded into one
// more run after it, bounded, and nothing held back after a failure.
import { describe, expect, test } from 'vitest';
import { coalescedRuns } from '../../../shared/lifecycle/bridge-events/coalesced-runs.js';

/** A run that waits until released, so the test decides what arrives while it runs. */
function gatedWork() {
  const releases: (() => void)[] = [];
  let runs = 0;
  const work = async (): Promise<number> => {
    runs += 1;
    const run = runs;
    await new Promise<void>((resolve) => releases.push(resolve));
    return run;
  };
  const releaseNext = async (): Promise<void> => {
    while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
    releases.shift()?.();
  };
  return { work, releaseNext, runs: () => runs };
}

describe('coalesced runs', () => {
  test('requests while a run is in progress return at once and cause exactly one more run', async () => {
    const runner = coalescedRuns<string>(3);
    const gated = gatedWork();
    const first = runner.run('web', gated.work);
    // Five deletions of the same NodePool arrive while its pass runs: none runs its own.
    const folded = await Promise.all(Array.from({ length: 5 }, () => runner.run('web', gated.work)));
    expect(folded).toEqual(Array.from({ length: 5 }, () => ({ ran: false })));
    await gated.releaseNext();
    await gated.releaseNext();
    expect(await first).toEqual({ ran: true, result: 2, runs: 2 });
    expect(gated.runs()).toBe(2);
  });

  test('different keys run side by side', async () => {
    const runner = coalescedRuns<string>(3);
    const gated = gatedWork();
    const web = runner.run('web', gated.work);
    const api = runner.run('api', gated.work);
    await gated.releaseNext();
    await gated.releaseNext();
    expect((await Promise.all([web, api])).map((o) => o.ran)).toEqual([true, true]);
    expect(gated.runs()).toBe(2);
  });

  test('a run repeats at most maxRuns times for requests that keep coming', async () => {
    const runner = coalescedRuns<string>(2);
    const gated = gatedWork();
    const first = runner.run('web', gated.work);
    await runner.run('web', gated.work);
    await gated.releaseNext();
    await runner.run('web', gated.work); // during the second run: past the bound, left to the next event
    await gated.releaseNext();
    expect(await first).toEqual({ ran: true, result: 2, runs: 2 });
    // The key is free again: the next request runs.
    const next = runner.run('web', gated.work);
    await gated.releaseNext();
    expect(await next).toMatchObject({ ran: true, runs: 1 });
  });

  test('a failed run frees its key and fails its caller', async () => {
    const runner = coalescedRuns<string>(3);
    await expect(runner.run('web', () => Promise.reject(new Error('API server away')))).rejects.toThrow(
      'API server away',
    );
    expect(await runner.run('web', () => Promise.resolve('ok'))).toEqual({
      ran: true,
      result: 'ok',
      runs: 1,
    });
  });
});
