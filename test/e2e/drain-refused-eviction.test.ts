// A drain in which the API server refuses one pod's eviction: a ValidatingAdmissionPolicy (evaluated by
// the real kube-apiserver, no webhook) answers 403 Forbidden to the eviction of one pod, as it answers
// NamespaceTerminating for a pod whose namespace is being deleted. The other pods of the node are evicted
// all the same; the refused pod holds the node until the refusal ends, then the drain finishes. Real
// control plane, ARM emulator through the real SDK, kubelet simulator; nothing is mocked.
import { randomUUID } from 'node:crypto';
import { AdmissionregistrationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test, vi } from 'vitest';
import { statusCodeOf } from '../../shared/kube/errors.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/index.js';
import {
  exampleRequirements,
  nodeClass,
  nodeClassRef,
  nodePool as fixtureNodePool,
} from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import { isInitialized, startDisruptionStack, type DisruptionStack } from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
const poolName = `drain-refused-${suffix}`;
const namespace = 'default';
// Listed first (pods come back sorted by name), so a drain that stopped at a refusal would evict nothing.
const stuck = `a-stuck-${suffix}`;
const others = [`b-free-${suffix}`, `c-free-${suffix}`];
const policyName = `refuse-eviction-${suffix}`;
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;
let admission: AdmissionregistrationV1Api;

// Nothing but the deletion below may disrupt these nodes.
const nodePool: NodePool = fixtureNodePool(poolName, poolName, { consolidateAfter: 'Never' });

async function refuseEvictionOf(podName: string): Promise<void> {
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: policyName },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods/eviction'] },
          ],
        },
        validations: [
          {
            expression: `object.metadata.name != '${podName}'`,
            message: `eviction of ${podName} is refused by the test`,
            reason: 'Forbidden',
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: policyName },
      spec: { policyName, validationActions: ['Deny'] },
    },
  });
}

async function removeRefusal(): Promise<void> {
  await admission.deleteValidatingAdmissionPolicyBinding({ name: policyName }).catch(() => undefined);
  await admission.deleteValidatingAdmissionPolicy({ name: policyName }).catch(() => undefined);
}

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-drain-refused-${suffix}`,
    latencies: { createMs: 1_000, deleteMs: 300, retryAfterSeconds: 0.3 },
  });
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  admission = config.makeApiClient(AdmissionregistrationV1Api);
  await env.stack.admin.objects.nodeClasses.create(nodeClass(poolName, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(nodePool);
});

afterAll(async () => {
  await removeRefusal();
  await core
    ?.deleteCollectionNamespacedPod({ namespace, labelSelector: `test=${suffix}`, gracePeriodSeconds: 0 })
    .catch(() => undefined);
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

const podExists = async (name: string) =>
  core.readNamespacedPod({ name, namespace }).then(
    () => true,
    () => false,
  );

test('one pod whose eviction is refused is retried on its own; the other pods are evicted meanwhile', async () => {
  const stop = env.sweepContinuously([poolName], 200);
  try {
    const name = `${poolName}-a`;
    const claim: NodeClaim = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name, labels: { [WellKnown.nodePoolLabel]: poolName } },
      spec: { nodeClassRef: nodeClassRef(poolName), requirements: exampleRequirements },
    };
    await env.stack.deps.objects.nodeClaims.create(claim);
    const ready = await eventually(
      async () => {
        const current = await env.stack.deps.objects.nodeClaims.get(name);
        return current && isInitialized(current) && current.status?.nodeName ? current : undefined;
      },
      `${name} initialized with a Node`,
      60_000,
    );
    for (const podName of [stuck, ...others]) {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: podName, namespace, labels: { test: suffix } },
          spec: {
            nodeName: ready.status?.nodeName ?? '',
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
          },
        },
      });
    }
    await refuseEvictionOf(stuck);
    // The API server loads a new policy a moment after it is created: wait until a dry-run eviction of the
    // pod is refused, so the drain meets the refusal.
    await eventually(
      () =>
        core
          .createNamespacedPodEviction({
            name: stuck,
            namespace,
            dryRun: 'All',
            body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: stuck, namespace } },
          })
          .then(
            () => undefined,
            (error: unknown) => (statusCodeOf(error) === 403 ? true : undefined),
          ),
      'the eviction policy in force',
      30_000,
    );
    await env.stack.deps.objects.nodeClaims.delete(name);

    await eventually(
      async () => {
        const left = await Promise.all(others.map(podExists));
        return left.every((exists) => !exists) ? true : undefined;
      },
      'the pods whose eviction is allowed to be evicted',
      60_000,
    );
    expect(await podExists(stuck)).toBe(true);
    expect(await env.stack.deps.objects.nodeClaims.get(name)).toBeDefined();

    await removeRefusal();
    await eventually(
      async () => ((await env.stack.deps.objects.nodeClaims.get(name)) ? undefined : true),
      'the drain to finish once the refusal ends',
      60_000,
    );
    expect(await podExists(stuck)).toBe(false);
  } finally {
    await stop();
  }
}, 180_000);
