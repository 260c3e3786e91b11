// Upstream's two scheduling policies as the solve applies them: MIN_VALUES_POLICY (Strict leaves a pod
// unschedulable when its NodeClaim's options fall below a minValues, BestEffort creates the NodeClaim with
// the minValues lowered and says so) and PREFERENCE_POLICY (Respect honours a preference it can meet,
// Ignore never tries it).
import { describe, expect, it } from 'vitest';
import { provisioningRecord } from '../../../shared/decisions/explain/provisioning-record.js';
import { provisionedNodeClaim } from '../../../shared/decisions/provisioned-nodeclaim.js';
import { solve } from '../../../shared/decisions/scheduling/index.js';
import type {
  NewNodeClaim,
  SchedulingOptions,
  TopologySpreadConstraint,
} from '../../../shared/decisions/scheduling/types.js';
import { WellKnown, type NodePool } from '../../../shared/models/karpenter.js';
import { instanceType, nodePool, pod, pods } from './fixtures.js';

const FAMILY = 'karpenter.azure.com/sku-family';
const ZONE = 'topology.kubernetes.io/zone';

const family = (name: string, letter: string, cpu: number, price: number) =>
  instanceType(name, cpu, cpu * 4, price, { labels: { [FAMILY]: letter } });

/** Three families, but a pod of 3 cpu fits only D and E: the F option has 2 cpu. */
const FAMILIES = [family('d4', 'D', 4, 0.2), family('e4', 'E', 4, 0.25), family('f2', 'F', 2, 0.1)];
const threeFamilies = nodePool('flexible', {
  requirements: [
    { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] },
    { key: FAMILY, operator: 'Exists', minValues: 3 },
  ],
  instanceTypes: FAMILIES,
});

const familyRequirement = (claim: NewNodeClaim | undefined) =>
  claim?.requirements.find((r) => r.key === FAMILY);

const strict: SchedulingOptions = { minValuesPolicy: 'Strict' };
const bestEffort: SchedulingOptions = { minValuesPolicy: 'BestEffort' };

const nodePoolObject: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'flexible', uid: 'uid-flexible' },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [{ key: FAMILY, operator: 'Exists', minValues: 3 }],
      },
    },
  },
};

describe('MIN_VALUES_POLICY', () => {
  it('Strict: a pod whose options keep 2 of the 3 families minValues asks for is unschedulable, for MinValues', () => {
    const result = solve({ pods: [pod({ cpu: '3' })], nodePools: [threeFamilies], options: strict });
    expect(result.newNodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]?.causes).toEqual([
      expect.objectContaining({ nodePool: 'flexible', cause: 'MinValues' }),
    ]);
    expect(result.unschedulable[0]?.reason).toMatch(/minValues 3 but only 2/);
  });

  it('BestEffort: the NodeClaim is created with minValues lowered to the 2 families left, and says so', () => {
    const result = solve({ pods: [pod({ cpu: '3' })], nodePools: [threeFamilies], options: bestEffort });
    expect(result.unschedulable).toEqual([]);
    const claim = result.newNodeClaims[0];
    expect(claim?.instanceTypeNames).toEqual(['d4', 'e4']);
    expect(familyRequirement(claim)).toEqual({ key: FAMILY, operator: 'Exists', minValues: 2 });
    expect(claim?.minValuesRelaxed).toBe(true);
    const written = provisionedNodeClaim({
      windowId: 'w1',
      claim: claim as NewNodeClaim,
      nodePool: nodePoolObject,
      nodeClass: undefined,
    });
    expect(written.metadata.annotations?.[WellKnown.minValuesRelaxedAnnotation]).toBe('true');
    expect(written.spec.requirements).toContainEqual({ key: FAMILY, operator: 'Exists', minValues: 2 });
    // explain says so too.
    const record = provisioningRecord({ windowId: 'w1', at: new Date(0), result, nodeClaimNames: ['c1'] });
    expect(record.launches[0]?.minValuesRelaxed).toBe(true);
  });

  it('BestEffort: a NodeClaim whose options meet minValues keeps it and is annotated "false"', () => {
    const result = solve({ pods: [pod({ cpu: '1' })], nodePools: [threeFamilies], options: bestEffort });
    const claim = result.newNodeClaims[0];
    expect(familyRequirement(claim)?.minValues).toBe(3);
    expect(claim?.minValuesRelaxed).toBeUndefined();
    const written = provisionedNodeClaim({
      windowId: 'w1',
      claim: claim as NewNodeClaim,
      nodePool: nodePoolObject,
      nodeClass: undefined,
    });
    expect(written.metadata.annotations?.[WellKnown.minValuesRelaxedAnnotation]).toBe('false');
  });

  it('BestEffort: a pod joining a NodeClaim keeps to its lowered minValues, as Karpenter checks an in-flight NodeClaim', () => {
    // Together two 3-cpu pods fit only d8 (one family): the second opens a NodeClaim of its own.
    const withLarge = { ...threeFamilies, instanceTypes: [...FAMILIES, family('d8', 'D', 8, 0.4)] };
    const result = solve({ pods: pods(2, { cpu: '3' }), nodePools: [withLarge], options: bestEffort });
    expect(result.unschedulable).toEqual([]);
    expect(result.newNodeClaims.map((c) => c.pods.length)).toEqual([1, 1]);
    for (const claim of result.newNodeClaims) {
      expect(familyRequirement(claim)?.minValues).toBe(2);
      expect(claim.minValuesRelaxed).toBe(true);
    }
    const strictResult = solve({ pods: pods(2, { cpu: '3' }), nodePools: [withLarge], options: strict });
    expect(strictResult.unschedulable).toHaveLength(2);
  });

  it('BestEffort: minValues is lowered to what the instance types kept after the cut have', () => {
    const result = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [threeFamilies],
      options: { ...bestEffort, maxInstanceTypes: 2 },
    });
    const claim = result.newNodeClaims[0];
    expect(claim?.instanceTypeNames).toEqual(['f2', 'd4']);
    expect(familyRequirement(claim)?.minValues).toBe(2);
    expect(claim?.minValuesRelaxed).toBe(true);
    const cut = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [threeFamilies],
      options: { ...strict, maxInstanceTypes: 2 },
    });
    expect(cut.newNodeClaims).toEqual([]);
    expect(cut.unschedulable[0]?.causes[0]?.cause).toBe('MinValues');
  });
});

describe('PREFERENCE_POLICY', () => {
  const preferringLarge = () =>
    pod(
      { cpu: '1' },
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 50,
                preference: {
                  matchExpressions: [{ key: WellKnown.instanceTypeLabel, operator: 'In', values: ['large'] }],
                },
              },
            ],
          },
        },
      },
    );

  it('Respect honours a preferred node affinity it can meet; Ignore never tries it and takes the cheapest', () => {
    const respected = solve({
      pods: [preferringLarge()],
      nodePools: [nodePool('default')],
      options: { preferencePolicy: 'Respect' },
    });
    expect(respected.newNodeClaims[0]?.instanceTypeNames).toEqual(['large']);
    const ignored = solve({
      pods: [preferringLarge()],
      nodePools: [nodePool('default')],
      options: { preferencePolicy: 'Ignore' },
    });
    expect(ignored.newNodeClaims[0]?.instanceTypeNames).toEqual(['small', 'medium', 'large']);
  });

  it('Respect spreads ScheduleAnyway across zones while it can; Ignore packs the pods without it', () => {
    const spread: TopologySpreadConstraint = {
      maxSkew: 1,
      topologyKey: ZONE,
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { app: 'web' } },
    };
    const web = () =>
      pods(3, { cpu: '1' }, { topologySpreadConstraints: [spread] }, { labels: { app: 'web' } });
    const respected = solve({
      pods: web(),
      nodePools: [nodePool('default')],
      options: { preferencePolicy: 'Respect' },
    });
    const zones = respected.newNodeClaims.map((c) => c.requirements.find((r) => r.key === ZONE)?.values);
    expect(zones.flat().sort()).toEqual(['westus2-1', 'westus2-2', 'westus2-3']);
    const ignored = solve({
      pods: web(),
      nodePools: [nodePool('default')],
      options: { preferencePolicy: 'Ignore' },
    });
    expect(ignored.newNodeClaims).toHaveLength(1);
    expect(ignored.newNodeClaims[0]?.pods).toHaveLength(3);
    expect(ignored.newNodeClaims[0]?.requirements.find((r) => r.key === ZONE)).toBeUndefined();
  });
});
