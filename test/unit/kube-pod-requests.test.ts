// A pod read from the API carries the requests kube-scheduler charges it with: the same computation the
// scheduling simulation uses, in its units (cpu in millicores), sidecars (restartable init containers) included.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { toConsolidationPod } from '../../shared/kube/pods.js';

const pod = (spec: V1Pod['spec']): V1Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec,
});

describe('toConsolidationPod requests', () => {
  test.each([
    {
      name: 'containers sum, plus the pod itself',
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '250m' } } },
          { name: 'b', resources: { requests: { cpu: '250m', memory: '1Gi' } } },
        ],
      },
      want: { cpu: 500, memory: 1024 ** 3, pods: 1 },
    },
    {
      name: 'a larger regular init container sets the peak',
      spec: {
        initContainers: [{ name: 'init', resources: { requests: { cpu: '2' } } }],
        containers: [{ name: 'a', resources: { requests: { cpu: '500m' } } }],
      },
      want: { cpu: 2000, pods: 1 },
    },
    {
      name: 'a sidecar runs beside the containers: added, and beside later init containers',
      spec: {
        initContainers: [
          { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '300m' } } },
          { name: 'migrate', resources: { requests: { cpu: '1' } } },
        ],
        containers: [{ name: 'a', resources: { requests: { cpu: '500m' } } }],
      },
      want: { cpu: 1300, pods: 1 },
    },
    {
      name: 'a limit without a request is the request; overhead is added',
      spec: {
        overhead: { cpu: '100m' },
        containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }],
      },
      want: { cpu: 1100, pods: 1 },
    },
    {
      name: 'an unreadable quantity leaves the requests out',
      spec: { containers: [{ name: 'a', resources: { requests: { cpu: 'lots' } } }] },
      want: undefined,
    },
  ])('$name', ({ spec, want }) => {
    const requests = toConsolidationPod(pod(spec as V1Pod['spec'])).requests;
    if (want === undefined) return expect(requests).toBeUndefined();
    expect(Object.keys(requests ?? {}).sort()).toEqual(Object.keys(want).sort());
    for (const [name, value] of Object.entries(want)) expect(requests?.[name]).toBe(value);
  });
});
