// A hostile AKSNodeClass against the real API server (its CRD schema lets these values through: the
// fields are free text there) and the ARM emulator: the class status the app writes as its own identity
// turns ValidationSucceeded=False and Ready=False naming each field, a NodeClaim of the class is blocked
// before anything is made for its node (no bootstrap token Secret, no VM PUT, no VM), and once the class
// is fixed its status turns Ready again and the sweep launches the same NodeClaim, without any event.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NODECLAIM_LABEL } from '../../shared/cloudprovider/azure/decisions/bootstrap-token.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { reconcileNodeClassStatus } from '../../shared/lifecycle/status/nodeclass-status.js';
import { LAUNCH_GRACE_MS } from '../../shared/lifecycle/sweep/steps/launch.js';
import type { AKSNodeClass } from '../../shared/models/index.js';
import type { Condition } from '../../shared/models/kube.js';
import { nodeClass } from '../support/fixtures.js';
import { launchNodeClaim } from '../support/launch-nodeclaim.js';
import {
  eventsAboutNodeClaim,
  eventually,
  startLaunchStack,
  type LaunchStack,
} from '../support/launch-stack.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const className = `hostile-${suffix}`;
const INJECTION = '--anonymous-auth=true --authorization-mode=AlwaysAllow';
const subscriptionId = '00000000-0000-0000-0000-000000000000';

beforeAll(async () => {
  stack = await startLaunchStack();
});

afterAll(async () => {
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
  await stack.admin.objects.nodeClasses.delete(className);
  await stack?.stop();
});

/** The class's status as the app's sweep writes it, then read back from the API server. */
async function reconciledStatus(): Promise<Map<string, Condition>> {
  const current = (await stack.deps.objects.nodeClasses.get(className)) as AKSNodeClass;
  await reconcileNodeClassStatus(stack.deps, current);
  const stored = (await stack.admin.objects.nodeClasses.get(className)) as AKSNodeClass;
  return new Map((stored.status?.conditions ?? []).map((c) => [c.type, c]));
}

describe('a hostile AKSNodeClass', () => {
  test('is not Ready, naming each field; its NodeClaim gets no token and no VM; fixed, it is Ready and the NodeClaim launches', async () => {
    const hostile = nodeClass(className, 'Ubuntu2204');
    hostile.spec.kubelet = {
      cpuCFSQuotaPeriod: `100ms ${INJECTION}`,
      allowedUnsafeSysctls: [`net.core.somaxconn ${INJECTION}`],
    };
    hostile.spec.vnetSubnetID = `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes ${INJECTION}`;
    const created = await stack.admin.objects.nodeClasses.create(hostile);
    // The API server's schema let every one of them through.
    expect(created.spec.kubelet?.cpuCFSQuotaPeriod).toBe(`100ms ${INJECTION}`);

    const conditions = await reconciledStatus();
    const validation = conditions.get('ValidationSucceeded');
    expect(validation).toMatchObject({ status: 'False', reason: 'InvalidFieldValue' });
    for (const path of [
      'spec.vnetSubnetID',
      'spec.kubelet.cpuCFSQuotaPeriod',
      'spec.kubelet.allowedUnsafeSysctls',
    ])
      expect(validation?.message).toContain(`${path}: `);
    expect(conditions.get('Ready')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
    expect(conditions.get('Ready')?.message).toMatch(
      /^ValidationSucceeded=False: spec\.vnetSubnetID: .*spec\.kubelet\.cpuCFSQuotaPeriod: "100ms --anonymous-auth=true/,
    );

    const nodeClaim = await launchNodeClaim(stack, className);
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const blocked = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      const launched = findCondition(current?.status?.conditions, 'Launched');
      return launched?.status === 'False' ? launched : undefined;
    }, 'Launched=False');
    expect(blocked.reason).toBe('NodeClassInvalid');
    expect(blocked.message).toContain(`AKSNodeClass "${className}" is invalid: spec.vnetSubnetID: `);
    expect(blocked.message).toContain('spec.kubelet.cpuCFSQuotaPeriod: "100ms --anonymous-auth=true');
    const events = await eventsAboutNodeClaim(stack, nodeClaim.metadata.name);
    const { core } = await stack.admin.kube();
    expect(events.map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'NodeClassInvalid']);
    // Nothing half-made: no token for the node, no PUT, no VM.
    const tokens = await core.listNamespacedSecret({
      namespace: 'kube-system',
      labelSelector: `${NODECLAIM_LABEL}=${nodeClaim.metadata.name}`,
    });
    expect(tokens.items).toEqual([]);
    expect(stack.emulator.controls.requests({ kind: 'putVm', vmName, method: 'PUT' })).toEqual([]);
    expect(stack.emulator.controls.vms().filter((vm) => vm.name === vmName)).toEqual([]);

    // Fixed: the next status write turns it Ready, and the sweep launches the blocked NodeClaim.
    await stack.admin.objects.nodeClasses.mergePatch(className, {
      spec: {
        kubelet: { cpuCFSQuotaPeriod: '100ms', allowedUnsafeSysctls: ['net.core.somaxconn'] },
        vnetSubnetID: null,
      },
    });
    const fixed = await reconciledStatus();
    expect(fixed.get('ValidationSucceeded')).toMatchObject({ status: 'True' });
    expect(fixed.get('Ready')).toMatchObject({ status: 'True', reason: 'Ready' });

    const createdAt = Date.parse(nodeClaim.metadata.creationTimestamp ?? '');
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, createdAt + LAUNCH_GRACE_MS + 1_000 - Date.now())),
    );
    await stack.host.triggerTimer('lifecycleSweep');
    const launched = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      return current?.status?.providerID ? current : undefined;
    }, 'providerID after the sweep');
    expect(findCondition(launched.status?.conditions, 'Launched')?.reason).toBe('VMProvisioning');
    expect(stack.emulator.controls.requests({ kind: 'putVm', vmName, method: 'PUT' })).toHaveLength(1);
  });
});
