// The NodeOverlay status step against in-memory fakes: with the gate off it reads nothing; with it on, a
// new overlay gets ValidationSucceeded and Ready and the provisioning batcher is signalled (pending pods
// may fit now); a second sweep with nothing changed writes nothing and signals nothing. The Kubernetes
// custom-objects API is faked here (a map of overlays, a status merge patch) because a unit test has no
// API server; test/integration/node-overlays.test.ts writes the same conditions through the real one.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { nodeOverlayStatusStep } from '../../../shared/lifecycle/sweep/steps/node-overlay-status.js';
import type { KubeClients } from '../../../shared/kube/client.js';
import type { NodeOverlay } from '../../../shared/models/node-overlay.js';
import { ProvisioningNames } from '../../../shared/runtime/function-names.js';
import { fakeLifecycle, fakeSweepContext, FakeOrchestrations } from '../../support/fake-lifecycle.js';

function overlayApi(overlays: Map<string, NodeOverlay>) {
  const calls = { list: 0, patch: 0 };
  const custom = {
    async listClusterCustomObject() {
      calls.list += 1;
      return { items: [...overlays.values()], metadata: {} };
    },
    async patchClusterCustomObjectStatus(request: { name: string; body: { status: NodeOverlay['status'] } }) {
      calls.patch += 1;
      const current = overlays.get(request.name)!;
      const next = { ...current, status: request.body.status };
      overlays.set(request.name, next);
      return next;
    },
  };
  // Only the two calls the step makes are provided; the cast stands in for the generated client class.
  const kube = async () => ({ custom: custom as unknown as CustomObjectsApi }) as KubeClients;
  return { kube, calls };
}

function setup(gateOn: boolean) {
  const fake = fakeLifecycle();
  const overlays = new Map<string, NodeOverlay>([
    [
      'discount',
      {
        metadata: { name: 'discount', generation: 1, resourceVersion: '1' },
        spec: { requirements: [], priceAdjustment: '-10%' },
      },
    ],
  ]);
  const api = overlayApi(overlays);
  fake.deps = {
    ...fake.deps,
    kube: api.kube,
    settings: {
      ...fake.deps.settings,
      featureGates: { ...fake.deps.settings.featureGates, NodeOverlay: gateOn },
    },
  };
  const orchestrations = new FakeOrchestrations();
  return { fake, overlays, api, orchestrations };
}

describe('nodeOverlayStatusStep', () => {
  test('reads nothing with the NodeOverlay gate off', async () => {
    const { fake, api, orchestrations } = setup(false);
    const report = await nodeOverlayStatusStep.run(fakeSweepContext(fake, orchestrations));
    expect(report).toMatchObject({ examined: 0, acted: 0, failed: 0 });
    expect(api.calls.list).toBe(0);
  });

  test('writes the conditions of a new overlay and signals provisioning once', async () => {
    const { fake, overlays, api, orchestrations } = setup(true);
    const first = await nodeOverlayStatusStep.run(fakeSweepContext(fake, orchestrations));
    expect(first).toMatchObject({ examined: 1, acted: 1, failed: 0 });
    expect(overlays.get('discount')?.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['ValidationSucceeded', 'True'],
      ['Ready', 'True'],
    ]);
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual([ProvisioningNames.instanceId]);

    const second = await nodeOverlayStatusStep.run(fakeSweepContext(fake, orchestrations));
    expect(second).toMatchObject({ examined: 1, acted: 0 });
    expect(api.calls.patch).toBe(1);
    expect(orchestrations.startCalls).toBe(1);
  });
});
