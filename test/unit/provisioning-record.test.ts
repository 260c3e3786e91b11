// The provisioning window's decision record, built from a real solve: every pod placed (on a new
// NodeClaim or existing capacity) or excluded per NodePool with its cause; each launch with its
// NodePool, cheapest instance types, narrowed zones, price and pods; and a bound on how many pods it lists.
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_SUBJECTS } from '../../shared/decisions/explain/decision-record.js';
import { provisioningRecord } from '../../shared/decisions/explain/provisioning-record.js';
import { solve } from '../../shared/decisions/scheduling/index.js';
import type { ExistingNode } from '../../shared/decisions/scheduling/types.js';
import { instanceType, nodePool, pod } from './scheduling/fixtures.js';

const at = new Date('2026-12-06T12:00:00Z');
const ZONE = 'topology.kubernetes.io/zone';
const many = Array.from({ length: 8 }, (_, i) => instanceType(`it-${i}`, 4 + i, 16, 0.2 + i * 0.01));

describe('provisioningRecord', () => {
  it('records placed pods, excluded pods with their causes, and each launch', () => {
    const existing: ExistingNode = {
      name: 'node-a',
      kind: 'Node',
      labels: {},
      allocatable: { cpu: '1', memory: '4Gi', pods: '110' },
    };
    const result = solve({
      pods: [
        pod({ cpu: '500m' }, {}, { name: 'small' }),
        pod({ cpu: '3' }, { nodeSelector: { [ZONE]: 'westus2-2' } }, { name: 'zonal' }),
        pod({ cpu: '100' }, {}, { name: 'huge' }),
      ],
      nodePools: [nodePool('default', { instanceTypes: many })],
      existingNodes: [existing],
    });
    const record = provisioningRecord({ windowId: 'w-1', at, result, nodeClaimNames: ['default-abc'] });

    expect(record).toMatchObject({ kind: 'provisioning', id: 'w-1', at: '2026-12-06T12:00:00.000Z' });
    expect(record.omittedPods).toBeUndefined();
    expect(record.pods).toEqual([
      {
        pod: 'default/huge',
        uid: 'uid-huge',
        excluded: [
          { nodePool: 'default', cause: 'Resources', message: expect.stringMatching(/cpu request 100/) },
        ],
        existingNodesFull: 1,
      },
      {
        pod: 'default/zonal',
        uid: 'uid-zonal',
        placed: { kind: 'NodeClaim', name: 'default-abc', new: true },
      },
      { pod: 'default/small', uid: 'uid-small', placed: { kind: 'Node', name: 'node-a', new: false } },
    ]);
    expect(record.launches).toEqual([
      {
        nodeClaim: 'default-abc',
        nodePool: 'default',
        instanceTypes: ['it-0', 'it-1', 'it-2', 'it-3', 'it-4'],
        zones: ['westus2-2'],
        capacityTypes: ['on-demand'],
        pricePerHour: 0.2,
        pods: ['default/zonal'],
      },
    ]);
  });

  it('leaves out a NodeClaim the window made none of, and lists no zones it did not narrow', () => {
    const result = solve({
      pods: [pod({ cpu: '3' }, {}, { name: 'a' }), pod({ cpu: '3' }, {}, { name: 'b' })],
      nodePools: [nodePool('default', { instanceTypes: [instanceType('four', 4, 16, 0.2)] })],
    });
    expect(result.newNodeClaims).toHaveLength(2);
    const record = provisioningRecord({ windowId: 'w', at, result, nodeClaimNames: ['first', undefined] });
    expect(record.launches.map((l) => l.nodeClaim)).toEqual(['first']);
    expect(record.launches[0]?.zones).toBeUndefined();
    expect(record.pods.filter((p) => p.placed)).toHaveLength(1);
  });

  it('keeps at most MAX_RECORD_SUBJECTS pods, the excluded ones first, and counts the rest', () => {
    const result = solve({
      pods: [
        ...Array.from({ length: 3 }, (_, i) => pod({ cpu: '100' }, {}, { name: `huge-${i}` })),
        ...Array.from({ length: MAX_RECORD_SUBJECTS }, (_, i) =>
          pod({ cpu: '10m' }, {}, { name: `tiny-${i}` }),
        ),
      ],
      nodePools: [nodePool('default', { instanceTypes: [instanceType('big', 64, 256, 1, { pods: 1000 })] })],
    });
    const names = result.newNodeClaims.map((_, i) => `claim-${i}`);
    const record = provisioningRecord({ windowId: 'w', at, result, nodeClaimNames: names });
    expect(record.pods).toHaveLength(MAX_RECORD_SUBJECTS);
    expect(record.omittedPods).toBe(3);
    expect(record.pods.slice(0, 3).map((p) => p.excluded?.[0]?.cause)).toEqual([
      'Resources',
      'Resources',
      'Resources',
    ]);
    // Launches are not bounded by the pod count: each lists its own pods.
    expect(record.launches.flatMap((l) => l.pods)).toHaveLength(MAX_RECORD_SUBJECTS);
  });
});
