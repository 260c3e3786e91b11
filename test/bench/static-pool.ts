// What the benches that launch a static NodePool for real share: its AKSNodeClass and NodePool (on-demand
// amd64 D sizes, `replicas` nodes, an optional Drifted budget), and the sweep run in a loop as the timer
// would while a condition is awaited, so a bench's figure is not rounded up to the sweep period.
import { fileURLToPath } from 'node:url';
import type { RunningFunctionApp } from '../../local/stack/function-app.js';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { initializationStep } from '../../shared/lifecycle/sweep/steps/initialization.js';
import { runLifecycleSweep, runSweepSteps } from '../../shared/lifecycle/sweep/sweep.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { silentLogger } from '../../shared/observability/logger.js';

export const crdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const initialized = (c: NodeClaim) => isConditionTrue(c.status?.conditions, 'Initialized');

export function nodeClassOf(name: string): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

/** A static NodePool of `replicas` on-demand amd64 D-family nodes; `budget` nodes at a time when given. */
export function nodePoolOf(name: string, replicas: number, budget?: number): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      replicas,
      ...(budget === undefined ? {} : { disruption: { budgets: [{ nodes: String(budget) }] } }),
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
          ],
        },
      },
    },
  };
}

export interface SweepLoopOptions {
  /** How often the sweep runs. */
  intervalMs: number;
  /** How often `done` is checked. */
  checkMs?: number;
  /** Told how many disruption commands each sweep that started any started. */
  onSweep?: (started: number) => void;
  /** A diagnosis: initialization run this often besides the sweep, as if Node Ready were an event. */
  promptInitializationEveryMs?: number;
}

/** Sweeps the pool's NodeClaims in the background until `done`, or throws after `timeoutMs`. */
export async function sweepUntil(
  app: RunningFunctionApp,
  pool: string,
  done: () => Promise<boolean>,
  timeoutMs: number,
  options: SweepLoopOptions,
): Promise<void> {
  const { intervalMs, checkMs = 100, onSweep, promptInitializationEveryMs } = options;
  const deadline = Date.now() + timeoutMs;
  const context = { orchestrations: app.host.orchestrations, log: silentLogger };
  const nodeClaimSelector = `karpenter.sh/nodepool=${pool}`;
  let stopped = false;
  const initializing = (async () => {
    while (promptInitializationEveryMs !== undefined && !stopped) {
      await runSweepSteps(app.deps, context, { steps: [initializationStep], nodeClaimSelector });
      await sleep(promptInitializationEveryMs);
    }
  })();
  const sweeps = (async () => {
    while (!stopped) {
      const next = Date.now() + intervalMs;
      const result = await runLifecycleSweep(app.deps, context, { nodeClaimSelector });
      if (result.status !== 'skipped') {
        const started = result.steps.find((s) => s.step === 'disruption')?.acted ?? 0;
        if (started > 0) onSweep?.(started);
      }
      while (!stopped && Date.now() < next) await sleep(Math.min(checkMs, next - Date.now()));
    }
  })();
  try {
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`${pool}: not done within ${timeoutMs / 1000} s`);
      await sleep(checkMs);
    }
  } finally {
    stopped = true;
    await sweeps;
    await initializing;
  }
}
