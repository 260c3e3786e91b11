// Termination's drain against in-memory fakes, as Karpenter tests its terminator: the deleted
// NodeClaim's Node is tainted karpenter.sh/disrupted:NoSchedule, its pods are evicted through the
// Eviction API (DaemonSet, mirror, finished and tolerating pods stay; do-not-disrupt ones are waited
// for), past terminationGracePeriod what is left is deleted, and a refusal holds back only its own pod.
// One call is one pass; Drained once no pod holds the Node. The per-pod decision is tested in
// test/unit/disruption-decisions.test.ts; the drain against a real cluster in test/e2e/.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import { MIRROR_POD_ANNOTATION } from '../../../shared/decisions/drain.js';
import { drainNodeClaim } from '../../../shared/lifecycle/termination/drain.js';
import { resetTerminationEventDedupe } from '../../../shared/lifecycle/termination/termination-events.js';
import { WellKnown } from '../../../shared/models/karpenter.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { condition, node, nodeClaim } from '../registration-fixtures.js';

const NODE = 'aks-default-abcde';
const input = { nodeClaim: { name: 'default-abcde', uid: 'uid-nodeclaim-1' } };

function pod(
  name: string,
  options: { owner?: string; annotations?: Record<string, string>; phase?: string; nodeName?: string } = {},
): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'apps',
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: options.owner ?? 'ReplicaSet',
          name: `${name}-owner`,
          uid: `owner-${name}`,
        },
      ],
    },
    spec: { nodeName: options.nodeName ?? NODE, containers: [{ name: 'app' }] },
    status: { phase: options.phase ?? 'Running', startTime: new Date(FAKE_NOW.getTime() - 3_600_000) },
  };
}

const disruptedTaints = (fake: FakeLifecycle) =>
  (fake.nodes.peek(NODE)?.spec.taints ?? []).filter((t) => t.key === WellKnown.disruptedTaintKey);

describe('drainNodeClaim', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    resetTerminationEventDedupe();
  });

  /** The NodeClaim deleted `deletedAgo` ms ago, with `terminationGracePeriod` if given, and its Node. */
  const seedDeleted = (
    options: { deletedAgo?: number; terminationGracePeriod?: string; disruptionReason?: string } = {},
  ) => {
    const claim = nodeClaim({
      conditions: [
        condition('Registered', 'True'),
        ...(options.disruptionReason
          ? [condition('DisruptionReason', 'True', options.disruptionReason)]
          : []),
      ],
      deletionTimestamp: new Date(FAKE_NOW.getTime() - (options.deletedAgo ?? 0)).toISOString(),
    });
    claim.metadata.finalizers = [WellKnown.terminationFinalizer];
    if (options.terminationGracePeriod) claim.spec.terminationGracePeriod = options.terminationGracePeriod;
    fake.nodeClaims.seed(claim);
    fake.nodes.seed(node({}));
  };

  test('a NodeClaim that is gone, or another under the name, is drained: nothing is touched', async () => {
    fake.nodes.seed(node({}));
    fake.pods.seed(pod('web'));
    expect(await drainNodeClaim(fake.deps, input)).toEqual({ status: 'Drained' });

    fake.nodeClaims.seed(nodeClaim({ uid: 'uid-someone-else' }));
    expect(await drainNodeClaim(fake.deps, input)).toEqual({ status: 'Drained' });

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.pods.evicted).toEqual([]);
  });

  test('a NodeClaim without a Node is drained', async () => {
    fake.nodeClaims.seed(nodeClaim({ providerID: null }));

    expect(await drainNodeClaim(fake.deps, input)).toEqual({ status: 'Drained' });
    expect(fake.nodes.writes).toEqual([]);
  });

  test('taints the Node and evicts the pods that must move, leaving the ones that stay', async () => {
    seedDeleted();
    fake.pods.seed(pod('web'));
    fake.pods.seed(pod('agent', { owner: 'DaemonSet' }));
    fake.pods.seed(pod('static', { annotations: { [MIRROR_POD_ANNOTATION]: 'x' } }));
    fake.pods.seed(pod('job', { phase: 'Succeeded' }));
    fake.pods.seed(pod('elsewhere', { nodeName: 'aks-other' }));

    expect(await drainNodeClaim(fake.deps, input)).toEqual({
      status: 'Draining',
      waiting: 1,
      blockedByPdb: 0,
      deleted: 0,
    });

    expect(disruptedTaints(fake)).toEqual([expect.objectContaining({ effect: 'NoSchedule' })]);
    expect(fake.pods.evicted).toEqual(['apps/web']);
    expect(fake.pods.deleted).toEqual([]);
  });

  test('a second pass waits for the evicted pod without evicting it or tainting again; its end drains the node', async () => {
    seedDeleted();
    fake.pods.seed(pod('web'));
    await drainNodeClaim(fake.deps, input);
    const nodeWrites = fake.nodes.writes.length;

    expect(await drainNodeClaim(fake.deps, input)).toMatchObject({ status: 'Draining', waiting: 1 });
    fake.pods.remove({ namespace: 'apps', name: 'web' });
    expect(await drainNodeClaim(fake.deps, input)).toEqual({ status: 'Drained' });

    expect(fake.pods.evicted).toEqual(['apps/web']);
    expect(fake.nodes.writes).toHaveLength(nodeWrites);
    expect(disruptedTaints(fake)).toHaveLength(1);
  });

  test('waits for a pod do-not-disrupt protects, without evicting it', async () => {
    seedDeleted();
    fake.pods.seed(pod('precious', { annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' } }));

    expect(await drainNodeClaim(fake.deps, input)).toMatchObject({ status: 'Draining', waiting: 1 });
    expect(fake.pods.evicted).toEqual([]);
  });

  test('past terminationGracePeriod deletes what is left, do-not-disrupt or not', async () => {
    seedDeleted({ deletedAgo: 120_000, terminationGracePeriod: '1m' });
    fake.pods.seed(pod('web'));
    fake.pods.seed(pod('precious', { annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' } }));

    expect(await drainNodeClaim(fake.deps, input)).toMatchObject({
      status: 'Draining',
      waiting: 2,
      deleted: 2,
    });
    expect(fake.pods.deleted).toEqual(['apps/web', 'apps/precious']);
    expect(fake.pods.evicted).toEqual([]);
  });

  test('within terminationGracePeriod still evicts', async () => {
    seedDeleted({ deletedAgo: 30_000, terminationGracePeriod: '1m' });
    fake.pods.seed(pod('web'));

    expect(await drainNodeClaim(fake.deps, input)).toMatchObject({ status: 'Draining', deleted: 0 });
    expect(fake.pods.evicted).toEqual(['apps/web']);
  });

  test('a refusal holds back only its own pod: a PodDisruptionBudget’s 429 and a 403 are counted apart', async () => {
    seedDeleted();
    fake.pods.seed(pod('guarded'));
    fake.pods.seed(pod('terminating-namespace'));
    fake.pods.seed(pod('web'));
    fake.pods.refusals.set('apps/guarded', new FakeApiError(429, 'Cannot evict pod: disruption budget'));
    fake.pods.refusals.set('apps/terminating-namespace', new FakeApiError(403, 'namespace is terminating'));

    expect(await drainNodeClaim(fake.deps, input)).toEqual({
      status: 'Draining',
      waiting: 3,
      blockedByPdb: 1,
      deleted: 0,
      refused: 1,
    });
    expect(fake.pods.evicted).toEqual(['apps/web']);
  });

  test('a pod gone before its eviction is skipped', async () => {
    seedDeleted();
    fake.pods.seed(pod('web'));
    fake.pods.refusals.set('apps/web', new FakeApiError(404, 'pods "web" not found'));

    expect(await drainNodeClaim(fake.deps, input)).toEqual({
      status: 'Draining',
      waiting: 1,
      blockedByPdb: 0,
      deleted: 0,
    });
  });

  test('an error that is no answer of the API server (a bug) fails the pass', async () => {
    seedDeleted();
    fake.pods.seed(pod('web'));
    fake.pods.refusals.set('apps/web', new TypeError('cannot read properties of undefined'));

    await expect(drainNodeClaim(fake.deps, input)).rejects.toThrow(TypeError);
  });

  describe("upstream's termination events", () => {
    const events = () =>
      fake.events.map((e) => `${e.type} ${e.target.kind}/${e.target.name} ${e.reason}: ${e.message}`);
    const later = (ms: number) => ({ ...fake.deps, now: () => new Date(FAKE_NOW.getTime() + ms) });

    test('an eviction is Evicted on its pod with the disruption reason, and a Node still holding pods is FailedDraining', async () => {
      seedDeleted({ disruptionReason: 'Drifted' });
      fake.pods.seed(pod('web'));
      fake.pods.seed(pod('agent', { owner: 'DaemonSet' }));

      await drainNodeClaim(fake.deps, input);

      expect(events()).toEqual([
        'Normal Pod/web Evicted: Evicted pod: Drifted',
        `Warning Node/${NODE} FailedDraining: Failed to drain node, 1 pods are waiting to be evicted`,
      ]);
      expect(fake.events[0]?.target).toMatchObject({ apiVersion: 'v1', namespace: 'apps' });
    });

    test('a NodeClaim deleted outright evicts for Forceful Termination; a drained Node says nothing', async () => {
      seedDeleted();
      fake.pods.seed(pod('web'));
      await drainNodeClaim(fake.deps, input);
      fake.pods.remove({ namespace: 'apps', name: 'web' });
      expect(await drainNodeClaim(fake.deps, input)).toEqual({ status: 'Drained' });

      expect(events()).toEqual([
        'Normal Pod/web Evicted: Evicted pod: Forceful Termination',
        `Warning Node/${NODE} FailedDraining: Failed to drain node, 1 pods are waiting to be evicted`,
      ]);
    });

    test('a PodDisruptionBudget refusal is FailedDraining once per 2 minutes per Node, as upstream dedupes', async () => {
      seedDeleted();
      fake.pods.seed(pod('guarded'));
      fake.pods.refusals.set('apps/guarded', new FakeApiError(429, 'Cannot evict pod: disruption budget'));

      await drainNodeClaim(fake.deps, input);
      await drainNodeClaim(later(60_000), input);
      await drainNodeClaim(later(121_000), input);

      const failed = `Warning Node/${NODE} FailedDraining: Failed to drain node, evicting pod violates a PDB`;
      expect(events()).toEqual([failed, failed]);
    });

    test('terminationGracePeriod: TerminationGracePeriodExpiring on the NodeClaim once and on the Node, then Disrupted on each pod deleted at its end', async () => {
      seedDeleted({ deletedAgo: 30_000, terminationGracePeriod: '1m' });
      fake.pods.seed(pod('precious', { annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' } }));
      const deadline = new Date(FAKE_NOW.getTime() + 30_000);
      const rfc3339 = deadline.toISOString().replace(/\.\d{3}Z$/, 'Z');
      const expiring = (kind: string, name: string) =>
        `Warning ${kind}/${name} TerminationGracePeriodExpiring: All pods will be deleted by ${rfc3339}`;

      await drainNodeClaim(fake.deps, input);
      expect(events()).toEqual([
        expiring('NodeClaim', 'default-abcde'),
        expiring('Node', NODE),
        `Warning Node/${NODE} FailedDraining: Failed to drain node, 1 pods are waiting to be evicted`,
      ]);

      // Past the deadline (and past the Node's dedupe window): the pod do-not-disrupt held is deleted;
      // the NodeClaim is not told again.
      fake.events.length = 0;
      await drainNodeClaim(later(150_000), input);
      const goTime = `${deadline.toISOString().slice(0, 10)} ${deadline.toISOString().slice(11, 19)} +0000 UTC`;
      expect(events()).toEqual([
        expiring('Node', NODE),
        `Normal Pod/precious Disrupted: Deleting the pod to accommodate the terminationTime ${goTime} of the node. The pod was granted 30 seconds of grace-period of its 30 terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.`,
        `Warning Node/${NODE} FailedDraining: Failed to drain node, 1 pods are waiting to be evicted`,
      ]);
    });
  });
});
