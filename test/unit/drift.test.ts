import { describe, expect, it } from 'vitest';
import { setCondition } from '../../shared/decisions/conditions.js';
import {
  applyDriftCondition,
  driftConditionUpdate,
  evaluateDrift,
  hashAnnotationsToRestamp,
  type DriftResult,
} from '../../shared/decisions/drift.js';
import { hashAnnotations } from '../../shared/decisions/hash.js';
import { WellKnown, type AKSNodeClass, type NodeClaim, type NodePool } from '../../shared/models/index.js';

const NOW = new Date('2025-03-10T12:00:00Z');

function nodePool(): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        metadata: { labels: { team: 'a' } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.azure.com/sku-cpu', operator: 'Gt', values: ['2'] },
          ],
        },
      },
    },
  };
}

function nodeClass(): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default' },
    spec: { imageFamily: 'Ubuntu2204', osDiskSizeGB: 128 },
  };
}

/** A NodeClaim launched from the current nodePool() and nodeClass(). */
function nodeClaim(): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: 'general-abc12',
      labels: {
        team: 'a',
        [WellKnown.nodePoolLabel]: 'general',
        [WellKnown.capacityTypeLabel]: 'on-demand',
        [WellKnown.skuCpuLabel]: '4',
      },
      annotations: hashAnnotations(nodePool(), nodeClass()),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID:
        'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/general-abc12',
    },
  };
}

interface Case {
  name: string;
  claim?: (c: NodeClaim) => void;
  pool?: (p: NodePool) => void;
  cls?: (c: AKSNodeClass) => void;
  noNodeClass?: boolean;
  reason?: 'NodePoolDrifted' | 'RequirementsDrifted' | 'NodeClassDrifted';
  message?: string;
}

const cases: Case[] = [
  { name: 'unchanged → not drifted' },
  {
    name: 'template label changed → NodePoolDrifted',
    pool: (p) => (p.spec.template.metadata = { labels: { team: 'b' } }),
    reason: 'NodePoolDrifted',
    message: 'NodePool general template changed',
  },
  {
    name: 'taint added → NodePoolDrifted',
    pool: (p) => (p.spec.template.spec.taints = [{ key: 'k', effect: 'NoSchedule' }]),
    reason: 'NodePoolDrifted',
  },
  { name: 'budgets changed → not drifted', pool: (p) => (p.spec.disruption = { budgets: [{ nodes: '0' }] }) },
  {
    name: 'requirement widened → not drifted',
    pool: (p) => (p.spec.template.spec.requirements[0]!.values = ['on-demand', 'spot']),
  },
  {
    name: 'requirement narrowed past the label → RequirementsDrifted',
    pool: (p) => (p.spec.template.spec.requirements[0]!.values = ['spot']),
    reason: 'RequirementsDrifted',
    message: 'karpenter.sh/capacity-type=on-demand does not satisfy karpenter.sh/capacity-type In [spot]',
  },
  {
    name: 'numeric requirement no longer met → RequirementsDrifted',
    pool: (p) => (p.spec.template.spec.requirements[1]!.values = ['8']),
    reason: 'RequirementsDrifted',
  },
  {
    name: 'NotIn now excludes the label value → RequirementsDrifted',
    pool: (p) =>
      p.spec.template.spec.requirements.push({
        key: WellKnown.skuCpuLabel,
        operator: 'NotIn',
        values: ['4'],
      }),
    reason: 'RequirementsDrifted',
  },
  {
    name: 'DoesNotExist on a label the node has → RequirementsDrifted',
    pool: (p) => p.spec.template.spec.requirements.push({ key: 'team', operator: 'DoesNotExist' }),
    reason: 'RequirementsDrifted',
  },
  {
    name: 'requirement on a key the NodeClaim lacks → not drifted (cannot be judged from labels)',
    pool: (p) =>
      p.spec.template.spec.requirements.push({
        key: WellKnown.zoneLabel,
        operator: 'In',
        values: ['westeurope-1'],
      }),
  },
  {
    name: 'imageFamily changed → NodeClassDrifted',
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
    reason: 'NodeClassDrifted',
    message: 'AKSNodeClass default changed',
  },
  {
    name: 'OS disk changed → NodeClassDrifted',
    cls: (c) => (c.spec.osDiskSizeGB = 64),
    reason: 'NodeClassDrifted',
  },
  { name: 'tags changed → not drifted', cls: (c) => (c.spec.tags = { env: 'x' }) },
  {
    name: 'node class unreadable → only NodePool and requirements judged',
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
    noNodeClass: true,
  },
  {
    name: 'template and node class both changed → NodePoolDrifted wins',
    pool: (p) => (p.spec.template.spec.expireAfter = '24h'),
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
    reason: 'NodePoolDrifted',
  },
  {
    name: 'requirements and node class both changed → RequirementsDrifted wins',
    pool: (p) => (p.spec.template.spec.requirements[0]!.values = ['spot']),
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
    reason: 'RequirementsDrifted',
  },
  // Only launched NodeClaims drift.
  {
    name: 'not launched (no providerID) → not drifted',
    claim: (c) => delete c.status,
    pool: (p) => (p.spec.template.spec.requirements[0]!.values = ['spot']),
  },
  {
    name: 'empty providerID → not drifted',
    claim: (c) => (c.status = { providerID: '' }),
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
  },
  // Hash versions: another version cannot be compared, so it is not drift.
  {
    name: 'NodePool hash version mismatch → not drifted',
    claim: (c) => (c.metadata.annotations![WellKnown.nodePoolHashVersionAnnotation] = 'v3'),
    pool: (p) => (p.spec.template.metadata = { labels: { team: 'b' } }),
  },
  {
    name: 'NodeClass hash version mismatch → not drifted',
    claim: (c) => (c.metadata.annotations![WellKnown.nodeClassHashVersionAnnotation] = 'v2'),
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
  },
  {
    name: 'no hash annotations → not drifted by hashes',
    claim: (c) => delete c.metadata.annotations,
    pool: (p) => (p.spec.template.metadata = { labels: { team: 'b' } }),
    cls: (c) => (c.spec.imageFamily = 'AzureLinux'),
  },
  {
    name: 'no hash annotations → still drifted by requirements',
    claim: (c) => delete c.metadata.annotations,
    pool: (p) => (p.spec.template.spec.requirements[0]!.values = ['spot']),
    reason: 'RequirementsDrifted',
  },
  {
    name: 'NodePool hash tampered → NodePoolDrifted',
    claim: (c) => (c.metadata.annotations![WellKnown.nodePoolHashAnnotation] = 'x'),
    reason: 'NodePoolDrifted',
  },
];

describe('evaluateDrift', () => {
  it.each(cases)('$name', (c) => {
    const claim = nodeClaim();
    const pool = nodePool();
    const cls = nodeClass();
    c.claim?.(claim);
    c.pool?.(pool);
    c.cls?.(cls);
    const result = evaluateDrift(claim, pool, c.noNodeClass ? undefined : cls);
    if (c.reason === undefined) {
      expect(result).toEqual({ drifted: false });
    } else {
      expect(result).toMatchObject({ drifted: true, reason: c.reason });
      if (c.message) expect(result.drifted && result.message).toContain(c.message);
    }
  });
});

describe('drift condition', () => {
  const drifted: DriftResult = {
    drifted: true,
    reason: 'NodeClassDrifted',
    message: 'AKSNodeClass default changed',
  };

  it('sets Drifted=True with the reason, or asks for removal', () => {
    expect(driftConditionUpdate(drifted)).toEqual({
      action: 'set',
      update: {
        type: 'Drifted',
        status: 'True',
        reason: 'NodeClassDrifted',
        message: 'AKSNodeClass default changed',
      },
    });
    expect(driftConditionUpdate({ drifted: false })).toEqual({ action: 'remove', type: 'Drifted' });
  });

  it('applies to a condition list, keeping the transition time while still drifted', () => {
    const first = applyDriftCondition(undefined, drifted, NOW);
    expect(first).toEqual([
      {
        type: 'Drifted',
        status: 'True',
        reason: 'NodeClassDrifted',
        message: 'AKSNodeClass default changed',
        lastTransitionTime: NOW.toISOString(),
      },
    ]);
    expect(applyDriftCondition(first, drifted, new Date('2025-03-11T00:00:00Z'))).toBe(first);
    const launched = setCondition(first, { type: 'Launched', status: 'True', reason: 'Launched' }, NOW);
    expect(applyDriftCondition(launched, { drifted: false }, NOW).map((c) => c.type)).toEqual(['Launched']);
    const clean = applyDriftCondition(undefined, { drifted: false }, NOW);
    expect(applyDriftCondition(clean, { drifted: false }, NOW)).toBe(clean);
  });
});

describe('hashAnnotationsToRestamp', () => {
  it('needs nothing for a NodeClaim stamped with the current versions', () => {
    expect(hashAnnotationsToRestamp(nodeClaim(), nodePool(), nodeClass())).toBeUndefined();
  });

  it('restamps only the family whose version differs, with current hashes', () => {
    const claim = nodeClaim();
    claim.metadata.annotations![WellKnown.nodePoolHashVersionAnnotation] = 'v3';
    claim.metadata.annotations![WellKnown.nodePoolHashAnnotation] = '12345';
    const current = hashAnnotations(nodePool(), nodeClass());
    expect(hashAnnotationsToRestamp(claim, nodePool(), nodeClass())).toEqual({
      [WellKnown.nodePoolHashAnnotation]: current[WellKnown.nodePoolHashAnnotation],
      [WellKnown.nodePoolHashVersionAnnotation]: 'v1',
    });
    // After the restamp, a later template change is detected.
    Object.assign(claim.metadata.annotations!, hashAnnotationsToRestamp(claim, nodePool(), nodeClass()));
    const changed = nodePool();
    changed.spec.template.spec.expireAfter = '1h';
    expect(evaluateDrift(claim, changed, nodeClass())).toMatchObject({
      drifted: true,
      reason: 'NodePoolDrifted',
    });
  });

  it('stamps a NodeClaim that has no hashes at all', () => {
    const claim = nodeClaim();
    delete claim.metadata.annotations;
    expect(hashAnnotationsToRestamp(claim, nodePool(), nodeClass())).toEqual(
      hashAnnotations(nodePool(), nodeClass()),
    );
    expect(hashAnnotationsToRestamp(claim, nodePool(), undefined)).toEqual({
      [WellKnown.nodePoolHashAnnotation]: hashAnnotations(nodePool(), nodeClass())[
        WellKnown.nodePoolHashAnnotation
      ],
      [WellKnown.nodePoolHashVersionAnnotation]: 'v1',
    });
  });

  it('leaves an already drifted NodeClaim alone so the evidence stays', () => {
    const claim = nodeClaim();
    delete claim.metadata.annotations;
    claim.status!.conditions = applyDriftCondition(
      undefined,
      { drifted: true, reason: 'NodePoolDrifted', message: 'm' },
      NOW,
    );
    expect(hashAnnotationsToRestamp(claim, nodePool(), nodeClass())).toBeUndefined();
  });
});
