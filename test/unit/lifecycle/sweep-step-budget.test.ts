// A sweep step's per-object work stops taking new objects once its time budget is spent, so a backlog in
// one step cannot hold back the steps after it; the objects it did not reach are reported as deferred and
// nothing is lost (the next sweep takes them, level-triggered). A failure still never stops the others.
import { describe, expect, test } from 'vitest';
import {
  forEachObject,
  OBJECT_CONCURRENCY,
  type SweepContext,
} from '../../../shared/lifecycle/sweep-step/sweep-step.js';
import { silentLogger } from '../../../shared/observability/logger.js';

function contextFor(stopping = () => false): SweepContext {
  // forEachObject reads only the log and stopping(); the rest of the context is the sweep's.
  return { log: silentLogger, stopping } as unknown as SweepContext;
}

describe('forEachObject time budget', () => {
  test('objects after the budget is spent are deferred, not worked', async () => {
    let clock = 0;
    const worked: number[] = [];
    const items = Array.from({ length: 20 }, (_, i) => i);
    const report = await forEachObject(
      contextFor(),
      'launch',
      items,
      String,
      async (item) => {
        worked.push(item);
        await Promise.resolve();
        clock += 3_000;
        return true;
      },
      { ms: 10_000, now: () => clock },
    );
    // Every worker took one object at the start (the clock at 0); by the time each finished the budget
    // was spent, so no worker took another.
    expect(worked).toEqual(items.slice(0, OBJECT_CONCURRENCY));
    expect(report).toEqual({
      step: 'launch',
      examined: 20,
      acted: OBJECT_CONCURRENCY,
      failed: 0,
      deferred: 20 - OBJECT_CONCURRENCY,
    });
  });

  test('a step within its budget reports no deferred field, and failures are counted', async () => {
    const report = await forEachObject(contextFor(), 'registration', [1, 2, 3], String, async (item) => {
      if (item === 2) throw new Error('refused');
      return item === 1;
    });
    expect(report).toEqual({ step: 'registration', examined: 3, acted: 1, failed: 1 });
  });

  test('a sweep that lost its lease defers nothing: it stops, and the holder of the lease sweeps', async () => {
    let stop = false;
    const report = await forEachObject(
      contextFor(() => stop),
      'drift',
      Array.from({ length: 20 }, (_, i) => i),
      String,
      async () => {
        stop = true;
        await Promise.resolve();
        return true;
      },
    );
    // The first object's work saw the lease lost before any other worker took one.
    expect(report).toEqual({ step: 'drift', examined: 20, acted: 1, failed: 0 });
  });
});
