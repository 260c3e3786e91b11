// Harness for the drift and disruption end-to-end tests: the launch stack (real control plane, Azurite,
// ARM emulator through the real SDK, the app's definitions in the in-process host), a kubelet simulator
// so launched VMs become Nodes, and a sweeper that runs the lifecycle sweep in a loop confined to this
// file's NodePools (label selector + its own Lease), so files sharing the control plane stay apart.
import { inject } from 'vitest';
import { startKubeletSimulator, type KubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { isDisrupting } from '../../shared/decisions/disruption-state.js';
import { findNodesForClaim } from '../../shared/decisions/registration.js';
import { listNodes } from '../../shared/kube/nodes.js';
import {
  DEFAULT_SWEEP_LEASE,
  runLifecycleSweep,
  type SweepResult,
} from '../../shared/lifecycle/sweep/sweep.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';
import { exampleRequirements, nodeClassRef } from './fixtures.js';
import { sweepLeaseNamespace } from './identities.js';
import { startLaunchStack, type LaunchStack, type LaunchStackOptions } from './launch-stack.js';

export interface DisruptionStack {
  stack: LaunchStack;
  simulator: KubeletSimulator;
  /** Runs one sweep over the NodeClaims of the given NodePools (retrying while another holds the slot). */
  sweep(pools: readonly string[]): Promise<SweepResult>;
  /** Sweeps the pools every `intervalMs` until the returned function is called. */
  sweepContinuously(pools: readonly string[], intervalMs?: number): () => Promise<void>;
  nodeClaimsOf(pool: string): Promise<NodeClaim[]>;
  nodes(): Promise<Node[]>;
  stop(): Promise<void>;
}

export async function startDisruptionStack(
  options: LaunchStackOptions & { leaseName: string },
): Promise<DisruptionStack> {
  const stack = await startLaunchStack({
    ...options,
    env: {
      REPLACEMENT_POLL_SECONDS: '0.3',
      // 36 polls, as the fallback was before it had a setting of its own.
      REPLACEMENT_FALLBACK_SECONDS: '10.8',
      DRAIN_POLL_SECONDS: '0.3',
      LAUNCH_POLL_INTERVAL_SECONDS: '0.3',
      LAUNCH_MAX_POLL_INTERVAL_SECONDS: '0.5',
      ...options.env,
    },
  });
  const simulator = await startKubeletSimulator({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator: stack.emulator,
    subscriptionId: stack.settings.azure.subscriptionId,
    resourceGroup: stack.settings.azure.resourceGroup,
    bootDelayMs: 300,
    readyDelayMs: 200,
  });
  const memory = { leftovers: createLeftoverMemory() };
  const selector = (pools: readonly string[]) => `karpenter.sh/nodepool in (${pools.join(',')})`;
  const context = { orchestrations: stack.host.orchestrations, log: stack.deps.log };
  // The shipped Lease name, in a namespace of this file's own (see sweepLeaseNamespace).
  const leaseNamespace = await sweepLeaseNamespace(options.leaseName);
  const lease = { ...DEFAULT_SWEEP_LEASE, namespace: leaseNamespace.namespace };

  const sweep = async (pools: readonly string[]): Promise<SweepResult> => {
    for (;;) {
      const result = await runLifecycleSweep(stack.deps, context, {
        nodeClaimSelector: selector(pools),
        lease,
        memory,
      });
      if (result.status !== 'skipped') return result;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    stack,
    simulator,
    sweep,
    sweepContinuously(pools, intervalMs = 250) {
      let stopped = false;
      const loop = (async () => {
        while (!stopped) {
          await sweep(pools);
          await new Promise((resolve) => setTimeout(resolve, intervalMs));
        }
      })();
      return async () => {
        stopped = true;
        await loop;
      };
    },
    nodeClaimsOf: (pool) =>
      stack.deps.objects.nodeClaims.list({ labelSelector: `karpenter.sh/nodepool=${pool}` }),
    nodes: async () => listNodes((await stack.deps.kube()).core),
    async stop() {
      await simulator.stop();
      await stack.stop();
      await leaseNamespace.remove();
    },
  };
}

export function staticNodePool(
  name: string,
  nodeClassName: string,
  replicas: number,
  budgets: NonNullable<NodePool['spec']['disruption']>['budgets'],
): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      replicas,
      disruption: { ...(budgets ? { budgets } : {}) },
      template: {
        spec: {
          nodeClassRef: nodeClassRef(nodeClassName),
          requirements: exampleRequirements,
        },
      },
    },
  };
}

export const isInitialized = (nodeClaim: NodeClaim): boolean =>
  isConditionTrue(nodeClaim.status?.conditions, 'Initialized');

/** NodeClaims of `claims` that count against a budget right now (marked, tainted, NotReady, deleting). */
export function disruptingNow(claims: readonly NodeClaim[], nodes: readonly Node[]): NodeClaim[] {
  return claims.filter(
    (c) => isInitialized(c) && isDisrupting(c, findNodesForClaim(nodes, c.status?.providerID ?? '')),
  );
}
