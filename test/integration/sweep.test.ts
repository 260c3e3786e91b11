// The lifecycle sweep against the real kube-apiserver: concurrent sweeps converge to the state one sweep
// reaches without losing anyone's writes, and the cluster Lease keeps sweeps from overlapping.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoordinationV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { findCondition } from '../../shared/decisions/conditions.js';
import { getNode } from '../../shared/kube/nodes.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { tryAcquireLease, type LeaseOptions } from '../../shared/kube/lease.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import {
  DEFAULT_SWEEP_LEASE,
  runLifecycleSweep,
  runSweepSteps,
  type SweepResult,
} from '../../shared/lifecycle/sweep/sweep.js';
import type { NodeClaim } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';
import type { Metrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { CoreV1Api } from '@kubernetes/client-node';
import {
  createLaunchedNodeClaim,
  deleteNodesAndNodeClaims,
  kubeletNode,
  orchestrationsMustNotBeUsed,
  providerIdOf,
  reportNodeReady,
  testDependencies,
  uniqueSuffix,
  unregisteredTaint,
  vmNameOf,
} from './registration-support.js';
import { sweepLeaseNamespace } from '../support/identities.js';

const suffix = uniqueSuffix();
const groupLabel = 'test.example/sweep-group';
const context = { orchestrations: orchestrationsMustNotBeUsed, log: silentLogger };
const dedicated = { key: 'example.com/dedicated', value: 'sweep', effect: 'NoSchedule' as const };

let deps: LifecycleDependencies;
let metrics: Metrics;
let core: CoreV1Api;
let coordination: CoordinationV1Api;
const nodeClaims: string[] = [];
const nodes: string[] = [];
/** Lease namespaces of this file's own, with the shipped Lease Role (see sweepLeaseNamespace). */
const leaseNamespaces: { remove: () => Promise<void> }[] = [];

async function sweepLease(name: string, durationSeconds: number): Promise<LeaseOptions> {
  const granted = await sweepLeaseNamespace(name);
  leaseNamespaces.push(granted);
  return { ...DEFAULT_SWEEP_LEASE, namespace: granted.namespace, durationSeconds };
}

beforeAll(() => {
  ({ deps, metrics, core } = testDependencies({
    kubeconfigPath: inject('kubeconfigPath'),
    appKubeconfigPath: inject('functionsKubeconfigPath'),
    caCertPath: inject('devCaCertPath'),
  }));
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  coordination = config.makeApiClient(CoordinationV1Api);
});

afterAll(async () => {
  await deleteNodesAndNodeClaims({ core, deps, nodes, nodeClaims });
  for (const granted of leaseNamespaces) await granted.remove();
});

/** `count` launched NodeClaims whose Nodes have joined Ready, still carrying the unregistered taint. */
async function joinedGroup(group: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `sweep-${group}-${i}-${suffix}`);
  await Promise.all(
    names.map(async (name) => {
      nodeClaims.push(name);
      nodes.push(vmNameOf(name));
      await createLaunchedNodeClaim(deps, {
        name,
        labels: { [groupLabel]: `${group}-${suffix}`, 'karpenter.sh/nodepool': `pool-${group}-${suffix}` },
        taints: [dedicated],
      });
      await core.createNode({
        body: kubeletNode({
          name: vmNameOf(name),
          providerID: providerIdOf(name),
          taints: [unregisteredTaint, dedicated],
        }),
      });
      await reportNodeReady(core, vmNameOf(name));
    }),
  );
  // The node lifecycle controller taints a Node not-ready until it sees the kubelet's Ready status; let
  // it catch up so both groups start from the same state.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const current = await Promise.all(names.map((name) => getNode(core, vmNameOf(name))));
    if (current.every((n) => !n?.spec.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')))) break;
    if (Date.now() > deadline) throw new Error('Nodes kept node.kubernetes.io taints');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return names;
}

function sweepGroup(group: string): Promise<SweepResult> {
  return runSweepSteps(deps, context, {
    nodeClaimSelector: `${groupLabel}=${group}-${suffix}`,
    memory: { leftovers: createLeftoverMemory() },
  });
}

/** What the sweep is responsible for, with names and times taken out so two groups compare equal. */
function normalized(nodeClaim: NodeClaim, node: Node | undefined) {
  const labels = { ...node?.metadata.labels };
  for (const key of ['kubernetes.io/hostname', groupLabel, 'karpenter.sh/nodepool', 'other.example/owner']) {
    delete labels[key];
  }
  return {
    conditions: (nodeClaim.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`).sort(),
    nodeNameMatches: nodeClaim.status?.nodeName === node?.metadata.name,
    labels,
    taints: (node?.spec.taints ?? [])
      .filter((t) => !t.key.startsWith('node.kubernetes.io/'))
      .map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`)
      .sort(),
    finalizers: node?.metadata.finalizers,
    owners: node?.metadata.ownerReferences?.map((o) => `${o.kind}/${o.uid === nodeClaim.metadata.uid}`),
  };
}

async function stateOf(names: readonly string[]) {
  return Promise.all(
    names.map(async (name) => {
      const nodeClaim = await deps.objects.nodeClaims.get(name);
      if (!nodeClaim) throw new Error(`${name} is gone`);
      return normalized(nodeClaim, await getNode(core, vmNameOf(name)));
    }),
  );
}

const failures = (result: SweepResult): number =>
  result.status === 'skipped' ? 0 : result.steps.reduce((sum, step) => sum + step.failed, 0);

describe('lifecycle sweep', () => {
  it('two concurrent sweeps reach the same end state as one, and neither loses a concurrent write by someone else', async () => {
    const size = 10;
    const single = await joinedGroup('one', size);
    const racing = await joinedGroup('two', size);

    const alone = await sweepGroup('one');
    expect(alone.status).toBe('completed');
    expect(failures(alone)).toBe(0);

    // Two sweeps of the same NodeClaims at once, while "someone else" labels every Node.
    const [first, second] = await Promise.all([
      sweepGroup('two'),
      sweepGroup('two'),
      ...racing.map((name) =>
        core.patchNode(
          { name: vmNameOf(name), body: { metadata: { labels: { 'other.example/owner': 'them' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    ]);
    expect(failures(first as SweepResult)).toBe(0);
    expect(failures(second as SweepResult)).toBe(0);

    const expected = await stateOf(single);
    expect(expected[0]).toMatchObject({
      conditions: [
        'Initialized=True/Initialized',
        'Launched=True/Launched',
        'Ready=True/Ready',
        'Registered=True/Registered',
      ],
      nodeNameMatches: true,
      labels: { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' },
      taints: ['example.com/dedicated=sweep:NoSchedule'],
      finalizers: ['karpenter.sh/termination'],
      owners: ['NodeClaim/true'],
    });
    expect(await stateOf(racing)).toEqual(expected);
    for (const name of racing) {
      expect((await getNode(core, vmNameOf(name)))?.metadata.labels?.['other.example/owner']).toBe('them');
    }
    // Each transition was made, and counted, exactly once although two sweeps attempted it.
    expect(
      metrics.count('operator_nodeclaim_status_condition_transitions_total', {
        type: 'Registered',
        karpenter_sh_nodepool: `pool-two-${suffix}`,
      }),
    ).toBe(size);
    expect(
      metrics.count('operator_nodeclaim_status_condition_transitions_total', {
        type: 'Initialized',
        karpenter_sh_nodepool: `pool-two-${suffix}`,
      }),
    ).toBe(size);

    // A sweep over a settled group writes nothing.
    const versions = await Promise.all(racing.map((n) => deps.objects.nodeClaims.get(n)));
    const quiet = await sweepGroup('two');
    expect(quiet.status === 'completed' && quiet.steps.every((s) => s.acted === 0)).toBe(true);
    const after = await Promise.all(racing.map((n) => deps.objects.nodeClaims.get(n)));
    expect(after.map((n) => n?.metadata.resourceVersion)).toEqual(
      versions.map((n) => n?.metadata.resourceVersion),
    );
  });

  it('runs at most one sweep at a time: an overlapping run in the process returns at once, and a lease held elsewhere skips the sweep', async () => {
    const lease = await sweepLease(`sweep-lease-${suffix}`, 30);
    const selector = {
      nodeClaimSelector: `${groupLabel}=none-${suffix}`,
      memory: { leftovers: createLeftoverMemory() },
    };

    const [a, b] = await Promise.all([
      runLifecycleSweep(deps, context, { lease, ...selector }),
      runLifecycleSweep(deps, context, { lease, ...selector }),
    ]);
    expect([a.status, b.status].sort()).toEqual(['completed', 'skipped']);

    // Another process holds the lease: this one's sweep is skipped and names the holder.
    const clients = await deps.kube();
    const other = await tryAcquireLease(clients, lease, 'other-process', deps.now);
    expect(other.held).toBeDefined();
    const skipped = await runLifecycleSweep(deps, context, { lease, ...selector });
    expect(skipped).toEqual({ status: 'skipped', reason: 'the sweep lease is held by other-process' });

    // Released: the next sweep runs (and releases in turn).
    await other.held?.release();
    expect((await runLifecycleSweep(deps, context, { lease, ...selector })).status).toBe('completed');
  });

  it('takes over a lease whose holder stopped renewing, and the old holder learns it lost it', async () => {
    // Long enough that the successor's early attempt surely comes within it.
    const lease = await sweepLease(`sweep-expiry-${suffix}`, 30);
    const clients = await deps.kube();
    const crashed = await tryAcquireLease(clients, lease, 'crashed', deps.now);
    expect(crashed.held).toBeDefined();

    const early = await tryAcquireLease(clients, lease, 'successor', deps.now);
    expect(early).toEqual({ held: undefined, holder: 'crashed' });

    const later = () => new Date(Date.now() + 31_000);
    const successor = await tryAcquireLease(clients, lease, 'successor', later);
    expect(successor.held).toBeDefined();
    expect(await crashed.held?.renew()).toBe(false);
    expect(await successor.held?.renew()).toBe(true);
    const stored = await coordination.readNamespacedLease({ name: lease.name, namespace: lease.namespace });
    expect(stored.spec?.holderIdentity).toBe('successor');
    expect(stored.spec?.leaseTransitions).toBe(1);
    await successor.held?.release();
  });

  it('marks Registered from the read-once snapshot: a NodeClaim without a Node gets NodeNotFound, once', async () => {
    const name = `sweep-nonode-${suffix}`;
    nodeClaims.push(name);
    await createLaunchedNodeClaim(deps, { name, labels: { [groupLabel]: `lonely-${suffix}` } });
    const first = await sweepGroup('lonely');
    const claim = await deps.objects.nodeClaims.get(name);
    expect(findCondition(claim?.status?.conditions, 'Registered')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeNotFound',
    });
    expect(first.status === 'completed' && first.steps.find((s) => s.step === 'registration')?.acted).toBe(1);
    const second = await sweepGroup('lonely');
    expect(second.status === 'completed' && second.steps.find((s) => s.step === 'registration')?.acted).toBe(
      0,
    );
  });
});
