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
  /** Objects left for the next sweep because the step spent its time budget (absent when none). */
  deferred?: number;
}

export interface SweepStep {
  name: string;
  run(context: SweepContext): Promise<StepReport>;
}

/** Per-object work runs this many at a time: enough to hide API latency, few enough to stay polite. */
export const OBJECT_CONCURRENCY = 8;

/**
 * How long one step takes new objects in one sweep. The steps run in order, so without a bound a step
 * with a backlog delays every step after it: on a 1,000-node burst against a loaded API server, one sweep
 * spent 57 s launching 243 NodeClaims and the next 60 s registering 239, and drift and disruption waited
 * behind them for two minutes. Every step is level-triggered, so what one sweep does not reach the next
 * takes up a period later (the bridge's events usually get there first), in the same order.
 */
export const STEP_TIME_BUDGET_MS = 10_000;

/**
 * Runs `work` for each item, a few at a time (`concurrency`, OBJECT_CONCURRENCY unless said), until the step's time budget is spent (the rest are
 * deferred to the next sweep). One object's failure is logged and counted, never allowed to stop the
 * others: the next sweep retries it.
 */
export async function forEachObject<T>(
  context: SweepContext,
  step: string,
  items: readonly T[],
  describe: (item: T) => string,
  work: (item: T) => Promise<boolean>,
  budget: { ms?: number; now?: () => number; concurrency?: number } = {},
): Promise<StepReport> {
  const report: StepReport = { step, examined: items.length, acted: 0, failed: 0 };
  const now = budget.now ?? (() => performance.now());
  const deadline = now() + (budget.ms ?? STEP_TIME_BUDGET_MS);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !context.stopping() && now() < deadline) {
      const item = items[next++] as T;
      try {
        if (await work(item)) report.acted += 1;
      } catch (error) {
        report.failed += 1;
        context.log.warn('sweep step failed for one object', { step, object: describe(item), error });
      }
    }
  };
  const workers = Math.min(budget.concurrency ?? OBJECT_CONCURRENCY, items.length);
  await Promise.all(Array.from({ length: workers }, worker));
  const deferred = context.stopping() ? 0 : items.length - next;
  return deferred > 0 ? { ...report, deferred } : report;
}

export const nameOf = (nodeClaim: { metadata: { name: string } }): string => nodeClaim.metadata.name;
