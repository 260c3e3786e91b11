// What every sweep step gets and returns. Steps import this file, never the list of steps
// (../sweep/steps.ts), so a step can live with its concept (disruption/) without its folder and the
// sweep's importing each other; that is why this folder is apart from sweep/.
import type { Logger } from '../../observability/logger.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { LeftoverMemory } from './leftover-memory.js';
import type { SweepView } from '../cluster/snapshot.js';

export interface SweepContext {
  deps: LifecycleDependencies;
  view: SweepView;
  orchestrations: HandlerContext['orchestrations'];
  log: Logger;
  /** State kept between sweeps of this process (see ../sweep/launch-leftovers.ts for why it is in memory). */
  memory: { leftovers: LeftoverMemory };
  /** True once the sweep lost its lease: steps stop taking new objects. */
  stopping(): boolean;
  /** The label selector the sweep's NodeClaims were read with, if any (NodePool-wide steps honour it). */
  nodeClaimSelector?: string;
}

export interface StepReport {
  step: string;
  /** Objects the step looked at. */
  examined: number;
  /** Objects the step wrote or acted on. */
  acted: number;
  failed: number;
}

export interface SweepStep {
  name: string;
  run(context: SweepContext): Promise<StepReport>;
}

/** Per-object work runs this many at a time: enough to hide API latency, few enough to stay polite. */
export const OBJECT_CONCURRENCY = 8;

/**
 * Runs `work` for each item, a few at a time. One object's failure is logged and counted, never allowed
 * to stop the others: the next sweep retries it.
 */
export async function forEachObject<T>(
  context: SweepContext,
  step: string,
  items: readonly T[],
  describe: (item: T) => string,
  work: (item: T) => Promise<boolean>,
): Promise<StepReport> {
  const report: StepReport = { step, examined: items.length, acted: 0, failed: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !context.stopping()) {
      const item = items[next++] as T;
      try {
        if (await work(item)) report.acted += 1;
      } catch (error) {
        report.failed += 1;
        context.log.warn('sweep step failed for one object', { step, object: describe(item), error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBJECT_CONCURRENCY, items.length) }, worker));
  return report;
}

export const nameOf = (nodeClaim: { metadata: { name: string } }): string => nodeClaim.metadata.name;
