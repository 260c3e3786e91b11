// Termination, on its own: a deleted NodeClaim's VM is deleted and its Node removed by the app itself,
// then the finalizer goes. In the other end-to-end tests the kubelet simulator's cloud node controller
// also deletes a Node whose VM went away, so they would pass without the app's own Node deletion; here
// no simulator runs, so only the app can remove the Node, as its ClusterRole's `delete` on Nodes allows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { nodeClass } from '../support/fixtures.js';
import { announceNodeClaim, launchNodeClaim } from '../support/launch-nodeclaim.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { kubeletNode } from './registration-support.js';

describe('termination', () => {
  let stack: LaunchStack;
  const className = `term-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    stack = await startLaunchStack();
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  });
  afterAll(async () => {
    await stack?.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack?.stop();
  });

  it('deletes the VM, then the Node (no cloud node controller here), then releases the finalizer', async () => {
    const created = await launchNodeClaim(stack, className);
    const name = created.metadata.name;
    const launched = await eventually(async () => {
      const current = await stack.admin.objects.nodeClaims.get(name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'True' ? current : undefined;
    }, `${name} Launched=True`);
    const { core } = await stack.admin.kube();
    // Named as AKS names a node: after its VM (termination looks it up by that name and providerID).
    const nodeName = vmNameFor(name);
    await core.createNode({
      body: kubeletNode({ name: nodeName, providerID: launched.status?.providerID ?? '' }),
    });

    await stack.admin.objects.nodeClaims.delete(name);
    await announceNodeClaim(stack, launched);
    await eventually(
      async () => ((await stack.admin.objects.nodeClaims.get(name)) ? undefined : true),
      `${name} to be gone`,
      45_000,
    );
    expect(stack.emulator.controls.vms().filter((vm) => vm.name === vmNameFor(name))).toEqual([]);
    const node = await core.readNode({ name: nodeName }).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    expect(node?.metadata?.deletionTimestamp ?? node?.metadata?.name).toBe(undefined);
  });
});
