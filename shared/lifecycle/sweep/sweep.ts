// The lifecycle sweep, run by a timer: read every kind once, let each step decide and write what
// changed, at most one sweep at a time. Events from the bridge do the same work within seconds; the
// sweep is the safety net that catches whatever an event missed, and the home of the work that is about
// the whole cluster at once (timeouts, drift, disruption budgets, static NodePools). The steps and their
// order are in steps.ts.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { createLeftoverMemory } from '../sweep-step/leftover-memory.js';
import type { LeaseOptions } from '../../kube/lease.js';
import { readClusterSnapshot, SweepView } from '../cluster/snapshot.js';
import type { StepReport, SweepContext, SweepStep } from '../sweep-step/sweep-step.js';
import { lifecycleSteps } from './steps.js';

/** The sweep's Lease; its namespace is the app's own (settings.systemNamespace) unless a caller names one. */
export const DEFAULT_SWEEP_LEASE: Omit<LeaseOptions, 'namespace'> = {
  name: 'nodeclaim-azure-sweep',
  durationSeconds: 30,
};

export type SweepResult =
  | { status: 'skipped'; reason: string }
  | {
      status: 'completed' | 'stopped';
      counts: { nodeClaims: number; nodes: number; nodePools: number; nodeClasses: number };
      steps: StepReport[];
      durationMs: number;
      /**
       * Where the time went: the snapshot read and each step, in milliseconds. Kept apart from the step
       * reports, which say what a step did and compare equal across runs; these never do.
       */
      timingsMs: Record<string, number>;
    };

export interface SweepOptions {
  steps?: readonly SweepStep[];
  lease?: LeaseOptions;
  /** Label selector restricting the NodeClaims swept (see readClusterSnapshot). */
  nodeClaimSelector?: string;
  /** The selected objects read with every write made before the sweep in them (see readClusterSnapshot). */
  fresh?: boolean;
  /** Memory kept between this process's sweeps; tests pass their own to stay independent. */
  memory?: SweepContext['memory'];
}

const processMemory: SweepContext['memory'] = { leftovers: createLeftoverMemory() };
let running: Promise<SweepResult> | undefined;

/**
 * One sweep, if no other sweep runs: not in this process (an overrunning sweep makes the next occurrence
 * return at once instead of stacking behind it) and not anywhere else (the cluster Lease).
 */
export async function runLifecycleSweep(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  options: SweepOptions = {},
): Promise<SweepResult> {
  if (running) return { status: 'skipped', reason: 'a sweep is already running in this process' };
  const sweep = leasedSweep(deps, context, options);
  running = sweep;
  try {
    return await sweep;
  } finally {
    running = undefined;
  }
}

async function leasedSweep(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  options: SweepOptions,
): Promise<SweepResult> {
  const leaseOptions = options.lease ?? { ...DEFAULT_SWEEP_LEASE, namespace: deps.settings.systemNamespace };
  const identity = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const attempt = await deps.leases.tryAcquire(leaseOptions, identity, deps.now);
  if (!attempt.held) return { status: 'skipped', reason: `the sweep lease is held by ${attempt.holder}` };
  const lease = attempt.held;

  let lost = false;
  const renewal = setInterval(
    () => {
      lease.renew().then(
        (kept) => {
          if (!kept) lost = true;
        },
        (error: unknown) => context.log.warn('could not renew the sweep lease', { error }),
      );
    },
    (leaseOptions.durationSeconds * 1000) / 3,
  );
  try {
    return await runSweepSteps(deps, context, {
      ...options,
      stopping: () => {
        if (lost) context.log.warn('sweep lease lost; stopping this sweep');
        return lost;
      },
    });
  } finally {
    clearInterval(renewal);
    await lease
      .release()
      .catch((error: unknown) => context.log.warn('could not release the sweep lease', { error }));
  }
}

/**
 * The sweep itself, without the singleton: read once, then run the steps in order. Exported for the
 * benchmark and for tests that show concurrent sweeps converge even without the lease (every write is
 * guarded, so the lease saves work, it is not what keeps the result correct).
 */
export async function runSweepSteps(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  options: Omit<SweepOptions, 'lease'> & { stopping?: () => boolean } = {},
): Promise<SweepResult> {
  const started = performance.now();
  const snapshot = await readClusterSnapshot(deps, {
    ...(options.nodeClaimSelector ? { nodeClaimSelector: options.nodeClaimSelector } : {}),
    ...(options.fresh ? { fresh: true } : {}),
  });
  const timingsMs: Record<string, number> = { read: Math.round(performance.now() - started) };
  const sweepContext: SweepContext = {
    deps,
    view: new SweepView(snapshot),
    orchestrations: context.orchestrations,
    log: context.log,
    memory: options.memory ?? processMemory,
    stopping: options.stopping ?? (() => false),
    ...(options.nodeClaimSelector ? { nodeClaimSelector: options.nodeClaimSelector } : {}),
  };
  const reports: StepReport[] = [];
  for (const step of options.steps ?? lifecycleSteps) {
    if (sweepContext.stopping()) break;
    const stepStarted = performance.now();
    reports.push(await step.run(sweepContext));
    timingsMs[step.name] = Math.round(performance.now() - stepStarted);
  }
  const result: SweepResult = {
    status: sweepContext.stopping() ? 'stopped' : 'completed',
    counts: {
      nodeClaims: snapshot.nodeClaims.length,
      nodes: snapshot.nodes.length,
      nodePools: snapshot.nodePools.length,
      nodeClasses: snapshot.nodeClasses.length,
    },
    steps: reports,
    durationMs: Math.round(performance.now() - started),
    timingsMs,
  };
  context.log.info('lifecycle sweep finished', { ...result });
  return result;
}
