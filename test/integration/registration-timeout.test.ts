// Liveness end to end: a NodeClaim launched for real (queue event → VM PUT on the ARM emulator through the
// real SDK → launch monitor in the in-process host) whose Node never joins. A sweep that runs past the
// registration timeout (the sweep's clock is moved forward; nothing else is) writes the reason, records a
// Warning event and deletes the NodeClaim; the termination orchestration then deletes the VM and releases
// the finalizer. Real control plane, Azurite, ARM emulator; nothing mocked.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import { runSweepSteps } from '../../shared/lifecycle/sweep/sweep.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { eventually, startLaunchStack, watchNodeClaim, type LaunchStack } from '../support/launch-stack.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const name = `timeout-${suffix}`;
const runLabel = 'test.example/timeout-run';

beforeAll(async () => {
  stack = await startLaunchStack();
  await stack.admin.objects.nodeClasses.create(nodeClass(name, 'Ubuntu2204'));
  await stack.admin.objects.nodePools.create(nodePool(name, name));
});

afterAll(async () => {
  await stack?.admin.objects.nodePools.delete(name).catch(() => undefined);
  await stack?.admin.objects.nodeClasses.delete(name).catch(() => undefined);
  await stack?.stop();
});

describe('registration timeout', () => {
  it('records RegistrationTimeout, warns, deletes the NodeClaim, and termination removes its VM', async () => {
    const created = await stack.deps.objects.nodeClaims.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name, labels: { 'karpenter.sh/nodepool': name, [runLabel]: suffix } },
      spec: { nodeClassRef: nodeClassRef(name), requirements: exampleRequirements },
    });
    const watch = await watchNodeClaim(inject('kubeconfigPath'), name);
    try {
      await stack.publish({
        kind: 'NodeClaim',
        name,
        uid: created.metadata.uid ?? '',
        resourceVersion: created.metadata.resourceVersion ?? '',
      });
      const launched = await eventually(async () => {
        const current = await stack.deps.objects.nodeClaims.get(name);
        return findCondition(current?.status?.conditions, 'Launched')?.status === 'True'
          ? current
          : undefined;
      }, 'the VM to be created and the NodeClaim Launched');
      const vmName = vmNameFor(name);
      expect(stack.emulator.controls.vms().map((vm) => vm.name)).toContain(vmName);

      // Not yet timed out: the sweep leaves it alone.
      const sweepAt = (offsetMs: number) =>
        runSweepSteps(
          { ...stack.deps, now: () => new Date(Date.now() + offsetMs) },
          { orchestrations: stack.host.orchestrations, log: silentLogger },
          { nodeClaimSelector: `${runLabel}=${suffix}`, memory: { leftovers: createLeftoverMemory() } },
        );
      const early = await sweepAt(0);
      expect(early.status === 'completed' && early.steps.find((s) => s.step === 'liveness')?.acted).toBe(0);
      expect(await stack.deps.objects.nodeClaims.get(name)).toBeDefined();

      // Sixteen minutes later (the default timeout is fifteen) the Node still has not joined.
      const late = await sweepAt(16 * 60_000);
      expect(late.status === 'completed' && late.steps.find((s) => s.step === 'liveness')?.acted).toBe(1);

      await eventually(
        async () => ((await stack.deps.objects.nodeClaims.get(name)) === undefined ? true : undefined),
        'the NodeClaim to be terminated and gone',
        60_000,
      );
      expect(stack.emulator.controls.vms().map((vm) => vm.name)).not.toContain(vmName);

      // The reason was on the NodeClaim before it went, and in a Warning event.
      const timedOut = watch.versions.find(
        (v) => findCondition(v.status?.conditions, 'Registered')?.reason === 'RegistrationTimeout',
      );
      expect(findCondition(timedOut?.status?.conditions, 'Registered')?.status).toBe('False');
      const config = new KubeConfig();
      config.loadFromFile(inject('kubeconfigPath'));
      const events = await config.makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${name}`,
      });
      expect(
        events.items.some(
          (e) =>
            e.type === 'Warning' &&
            e.reason === 'RegistrationTimeout' &&
            e.involvedObject.uid === launched.metadata.uid,
        ),
      ).toBe(true);
      expect(
        stack.deps.metrics.count('karpenter_nodeclaims_disrupted_total', {
          nodepool: name,
          reason: 'registration_timeout',
        }),
      ).toBe(1);
    } finally {
      watch.stop();
    }
  });
});
