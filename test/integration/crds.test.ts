// The project's CRDs (infra/k8s/crds) as enforced by the real kube-apiserver that the global setup starts:
// schema, defaults, patterns, enums, CEL rules, transition rules, the status subresource and both served
// AKSNodeClass versions. Every object gets a unique name so test files can share one server.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  AKSNodeClassResource,
  AKSNodeClassV1Alpha2Resource,
  NodeClaimResource,
  NodePoolResource,
  apiVersionOf,
  type CustomResourceName,
} from '../../shared/kube/crd-names.js';
import {
  AKSNodeClassDefaults,
  ConditionTypes,
  KarpenterDefaults,
  WellKnown,
  type AKSNodeClass,
  type NodeClaim,
  type NodeClaimStatus,
  type NodePool,
} from '../../shared/models/index.js';

interface Named {
  metadata: { name: string };
}

type FieldPath = readonly (string | number)[];

let customObjects: CustomObjectsApi;
let objects: KubernetesObjectApi;
const createdObjects: { resource: CustomResourceName; name: string }[] = [];

beforeAll(() => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  objects = KubernetesObjectApi.makeApiClient(kubeConfig);
});

afterAll(async () => {
  for (const { resource, name } of createdObjects.reverse()) {
    await ignoreNotFound(customObjects.deleteClusterCustomObject({ ...coordinates(resource), name }));
  }
});

function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

function coordinates(resource: CustomResourceName): { group: string; version: string; plural: string } {
  return { group: resource.group, version: resource.version, plural: resource.plural };
}

async function create<T extends Named>(resource: CustomResourceName, body: T): Promise<T> {
  const result: unknown = await customObjects.createClusterCustomObject({ ...coordinates(resource), body });
  createdObjects.push({ resource, name: body.metadata.name });
  return result as T;
}

async function read<T>(resource: CustomResourceName, name: string): Promise<T> {
  const result: unknown = await customObjects.getClusterCustomObject({ ...coordinates(resource), name });
  return result as T;
}

async function replace<T extends Named>(resource: CustomResourceName, body: T): Promise<T> {
  const name = body.metadata.name;
  const result: unknown = await customObjects.replaceClusterCustomObject({
    ...coordinates(resource),
    name,
    body,
  });
  return result as T;
}

async function replaceStatus<T extends Named>(resource: CustomResourceName, body: T): Promise<T> {
  const name = body.metadata.name;
  const result: unknown = await customObjects.replaceClusterCustomObjectStatus({
    ...coordinates(resource),
    name,
    body,
  });
  return result as T;
}

async function ignoreNotFound(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ApiException) || error.code !== 404) throw error;
  }
}

/** Awaits a request the server must refuse and returns its HTTP code and Status message. */
async function rejection(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = error.body;
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string };
    return { code: error.code, message: status.message ?? '' };
  }
  throw new Error('the API server accepted a request it should have rejected');
}

/** A deep copy of `object` with `value` at `path`; values may be ones the typed models forbid. */
function withValue<T>(object: T, path: FieldPath, value: unknown): T {
  const copy = structuredClone(object);
  let cursor = copy as Record<string | number, unknown>;
  for (const [index, key] of path.entries()) {
    if (index === path.length - 1) {
      cursor[key] = value;
    } else {
      cursor[key] ??= typeof path[index + 1] === 'number' ? [] : {};
      cursor = cursor[key] as Record<string | number, unknown>;
    }
  }
  return copy;
}

function valueAt(object: unknown, path: FieldPath): unknown {
  return path.reduce<unknown>((cursor, key) => (cursor as Record<string | number, unknown>)[key], object);
}

function nodePool(name: string): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: WellKnown.archLabel, operator: 'In', values: ['amd64'] }],
        },
      },
    },
  };
}

function nodeClaim(name: string): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { [WellKnown.nodePoolLabel]: 'general-purpose' } },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [
        { key: WellKnown.instanceTypeLabel, operator: 'In', values: ['Standard_D2s_v5'] },
        { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] },
      ],
      taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' }],
      resources: { requests: { cpu: '1500m', memory: '4Gi' } },
    },
  };
}

function aksNodeClass(name: string, resource: CustomResourceName): AKSNodeClass {
  return {
    apiVersion: apiVersionOf(resource) as AKSNodeClass['apiVersion'],
    kind: 'AKSNodeClass',
    metadata: { name },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

describe('the upstream example manifest (NodePool + AKSNodeClass v1alpha2)', () => {
  const fixturePath = fileURLToPath(new URL('../fixtures/general-purpose.yaml', import.meta.url));
  const documents = parseAllDocuments(readFileSync(fixturePath, 'utf8')).map(
    (document) => document.toJS() as unknown,
  );
  const [appliedPool, appliedClass] = documents as [NodePool, AKSNodeClass];

  afterAll(async () => {
    await ignoreNotFound(
      customObjects.deleteClusterCustomObject({ ...coordinates(NodePoolResource), name: 'general-purpose' }),
    );
    await ignoreNotFound(
      customObjects.deleteClusterCustomObject({ ...coordinates(AKSNodeClassResource), name: 'default' }),
    );
  });

  it('is applied as written and reads back equal, plus only the defaults upstream fills in', async () => {
    expect(documents).toHaveLength(2);
    for (const document of documents) {
      await objects.patch(
        document as KubernetesObject,
        undefined,
        undefined,
        'crds-test',
        true,
        PatchStrategy.ServerSideApply,
      );
    }

    const pool = await read<NodePool>(NodePoolResource, 'general-purpose');
    expect(pool.apiVersion).toBe('karpenter.sh/v1');
    expect(pool.kind).toBe('NodePool');
    expect(pool.metadata.name).toBe('general-purpose');
    expect(pool.spec).toEqual({
      ...appliedPool.spec,
      disruption: {
        ...appliedPool.spec.disruption,
        consolidationPolicy: KarpenterDefaults.consolidationPolicy,
      },
    });

    const nodeClass = await read<AKSNodeClass>(AKSNodeClassV1Alpha2Resource, 'default');
    expect(nodeClass.apiVersion).toBe('karpenter.azure.com/v1alpha2');
    expect(nodeClass.metadata.name).toBe('default');
    expect(nodeClass.spec).toEqual({ ...appliedClass.spec, osDiskSizeGB: AKSNodeClassDefaults.osDiskSizeGB });
  });
});

describe('NodeClaim', () => {
  it('is created and read back with only the expireAfter default added; a status sent on create is dropped', async () => {
    const body = nodeClaim(uniqueName('claim'));
    const created = await create(NodeClaimResource, { ...body, status: { providerID: 'azure:///dropped' } });

    expect(created.spec).toEqual({ ...body.spec, expireAfter: KarpenterDefaults.expireAfter });
    expect(created.status).toBeUndefined();
    expect(await read<NodeClaim>(NodeClaimResource, body.metadata.name)).toEqual(created);
  });

  it('keeps status and the rest apart: /status writes only status, the main resource ignores status', async () => {
    const created = await create(NodeClaimResource, nodeClaim(uniqueName('claim')));

    const relabelled = await replace(NodeClaimResource, {
      ...created,
      metadata: {
        ...created.metadata,
        labels: { ...created.metadata.labels, [WellKnown.zoneLabel]: 'westeurope-1' },
      },
      status: { providerID: 'azure:///ignored-on-the-main-resource' },
    });
    expect(relabelled.metadata.labels?.[WellKnown.zoneLabel]).toBe('westeurope-1');
    expect(relabelled.status).toBeUndefined();
    expect(relabelled.metadata.generation).toBe(created.metadata.generation);

    const status: NodeClaimStatus = {
      providerID:
        'azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-general-purpose-abcde',
      imageID: '/CommunityGalleries/AKSUbuntu/images/2204gen2containerd/versions/202501.01.0',
      capacity: { cpu: '2', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '1900m', memory: '6Gi', pods: '110' },
      conditions: [
        {
          type: ConditionTypes.launched,
          status: 'True',
          reason: 'Launched',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          observedGeneration: 1,
        },
        {
          type: ConditionTypes.registered,
          status: 'Unknown',
          reason: 'AwaitingReconciliation',
          message: 'object is awaiting reconciliation',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    };
    const withStatus = await replaceStatus(NodeClaimResource, {
      ...relabelled,
      metadata: { ...relabelled.metadata, labels: { ignored: 'on-status-writes' } },
      spec: { ...relabelled.spec, expireAfter: 'Never' },
      status,
    });
    expect(withStatus.status).toEqual(status);
    expect(withStatus.spec).toEqual(relabelled.spec);
    expect(withStatus.metadata.labels).toEqual(relabelled.metadata.labels);
    expect(withStatus.metadata.generation).toBe(created.metadata.generation);

    // A writer holding an old copy of the object must not wipe the status through the main resource.
    const annotated = await replace(NodeClaimResource, {
      ...withStatus,
      metadata: { ...withStatus.metadata, annotations: { [WellKnown.nodePoolHashAnnotation]: '1234' } },
      status: {},
    });
    expect(annotated.status).toEqual(status);
    expect(annotated.metadata.annotations).toEqual({ [WellKnown.nodePoolHashAnnotation]: '1234' });

    const statusView: unknown = await customObjects.getClusterCustomObjectStatus({
      ...coordinates(NodeClaimResource),
      name: created.metadata.name,
    });
    expect((statusView as NodeClaim).status).toEqual(status);
  });

  it('refuses spec changes after creation', async () => {
    const created = await create(NodeClaimResource, nodeClaim(uniqueName('claim')));
    const { code, message } = await rejection(
      replace(NodeClaimResource, { ...created, spec: { ...created.spec, expireAfter: 'Never' } }),
    );
    expect(code).toBe(422);
    expect(message).toContain('spec is immutable');
  });

  it('refuses a status condition without a valid status value', async () => {
    const created = await create(NodeClaimResource, nodeClaim(uniqueName('claim')));
    const invalid = withValue(created, ['status'], {
      conditions: [{ type: 'Launched', status: 'Yes', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    });
    const { code, message } = await rejection(replaceStatus(NodeClaimResource, invalid));
    expect(code).toBe(422);
    expect(message).toContain('status.conditions[0].status: Unsupported value: "Yes"');
  });

  const rejected: { case: string; path: FieldPath; value: unknown; message: string }[] = [
    {
      case: 'an unknown requirement operator',
      path: ['spec', 'requirements', 0, 'operator'],
      value: 'Matches',
      message: 'spec.requirements[0].operator: Unsupported value: "Matches"',
    },
    {
      case: 'In without values',
      path: ['spec', 'requirements', 0, 'values'],
      value: [],
      message: "requirements with operator 'In' must have a value defined",
    },
    {
      case: 'a restricted karpenter.sh label key',
      path: ['spec', 'requirements', 0, 'key'],
      value: 'karpenter.sh/something',
      message: 'label domain "karpenter.sh" is restricted',
    },
    {
      case: 'an unknown taint effect',
      path: ['spec', 'taints', 0, 'effect'],
      value: 'NoRun',
      message: 'spec.taints[0].effect: Unsupported value: "NoRun"',
    },
    {
      case: 'a nodeClassRef without a name',
      path: ['spec', 'nodeClassRef', 'name'],
      value: '',
      message: 'name may not be empty',
    },
    {
      case: 'an expireAfter in days',
      path: ['spec', 'expireAfter'],
      value: '30d',
      message: 'spec.expireAfter in body should match',
    },
  ];

  it.each(rejected)('refuses $case', async ({ path, value, message: expected }) => {
    const body = withValue(nodeClaim(uniqueName('claim')), path, value);
    const { code, message } = await rejection(create(NodeClaimResource, body));
    expect(code).toBe(422);
    expect(message).toContain(expected);
  });

  it('accepts the karpenter.sh/nodepool requirement key that NodePools may not use', async () => {
    const body = withValue(nodeClaim(uniqueName('claim')), ['spec', 'requirements', 2], {
      key: WellKnown.nodePoolLabel,
      operator: 'In',
      values: ['general-purpose'],
    });
    const created = await create(NodeClaimResource, body);
    expect(created.spec.requirements[2]?.key).toBe(WellKnown.nodePoolLabel);
  });
});

describe('NodePool validation', () => {
  const budgetsPath = ['spec', 'disruption', 'budgets'] as const;
  const requirementPath = ['spec', 'template', 'spec', 'requirements', 1] as const;

  const rejected: { case: string; path: FieldPath; value: unknown; message: string }[] = [
    {
      case: 'a budget whose nodes is neither a count nor a percentage',
      path: budgetsPath,
      value: [{ nodes: '5x' }],
      message: `spec.disruption.budgets[0].nodes in body should match '^((100|[0-9]{1,2})%|[0-9]+)$'`,
    },
    {
      case: 'a budget above 100%',
      path: budgetsPath,
      value: [{ nodes: '101%' }],
      message: 'spec.disruption.budgets[0].nodes in body should match',
    },
    {
      case: 'a budget with a schedule but no duration',
      path: budgetsPath,
      value: [{ nodes: '1', schedule: '@daily' }],
      message: "'schedule' must be set with 'duration'",
    },
    {
      case: 'a budget with a duration but no schedule',
      path: budgetsPath,
      value: [{ nodes: '1', duration: '1h' }],
      message: "'schedule' must be set with 'duration'",
    },
    {
      case: 'a budget with a duration in seconds',
      path: budgetsPath,
      value: [{ nodes: '1', schedule: '@daily', duration: '30s' }],
      message: 'spec.disruption.budgets[0].duration in body should match',
    },
    {
      case: 'a budget with a malformed schedule',
      path: budgetsPath,
      value: [{ nodes: '1', schedule: '@sometimes', duration: '1h' }],
      message: 'spec.disruption.budgets[0].schedule in body should match',
    },
    {
      case: 'a budget with an unknown reason',
      path: budgetsPath,
      value: [{ nodes: '1', reasons: ['Expired'] }],
      message:
        'spec.disruption.budgets[0].reasons[0]: Unsupported value: "Expired": supported values: "Underutilized", "Empty", "Drifted"',
    },
    {
      case: 'an unknown consolidation policy',
      path: ['spec', 'disruption', 'consolidationPolicy'],
      value: 'WhenIdle',
      message: 'spec.disruption.consolidationPolicy: Unsupported value: "WhenIdle"',
    },
    {
      case: 'a consolidateAfter that is not a duration',
      path: ['spec', 'disruption', 'consolidateAfter'],
      value: 'forever',
      message: 'spec.disruption.consolidateAfter in body should match',
    },
    {
      case: 'an unknown requirement operator',
      path: requirementPath,
      value: { key: 'example.com/tier', operator: 'Like', values: ['x'] },
      message: 'spec.template.spec.requirements[1].operator: Unsupported value: "Like"',
    },
    {
      case: 'In without values',
      path: requirementPath,
      value: { key: 'example.com/tier', operator: 'In', values: [] },
      message: "requirements with operator 'In' must have a value defined",
    },
    {
      case: 'Lt with two values',
      path: requirementPath,
      value: { key: WellKnown.skuCpuLabel, operator: 'Lt', values: ['3', '4'] },
      message: "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
    },
    {
      case: 'Gt with a negative value',
      path: requirementPath,
      value: { key: WellKnown.skuCpuLabel, operator: 'Gt', values: ['-1'] },
      message: "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
    },
    {
      case: 'Gt with a non-integer value',
      path: requirementPath,
      value: { key: WellKnown.skuCpuLabel, operator: 'Gt', values: ['two'] },
      message: "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
    },
    {
      case: 'minValues above the number of values',
      path: requirementPath,
      value: { key: WellKnown.skuFamilyLabel, operator: 'In', values: ['D'], minValues: 2 },
      message:
        "requirements with 'minValues' must have at least that many values specified in the 'values' field",
    },
    {
      case: 'a requirement on the karpenter.sh/nodepool label',
      path: requirementPath,
      value: { key: WellKnown.nodePoolLabel, operator: 'In', values: ['other'] },
      message: 'label "karpenter.sh/nodepool" is restricted',
    },
    {
      case: 'a requirement on a restricted karpenter.sh label',
      path: requirementPath,
      value: { key: 'karpenter.sh/anything', operator: 'Exists' },
      message: 'label domain "karpenter.sh" is restricted',
    },
    {
      case: 'a requirement on kubernetes.io/hostname',
      path: requirementPath,
      value: { key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] },
      message: 'label "kubernetes.io/hostname" is restricted',
    },
    {
      case: 'a template label in the karpenter.sh domain',
      path: ['spec', 'template', 'metadata', 'labels'],
      value: { 'karpenter.sh/registered': 'true' },
      message: 'label domain "karpenter.sh" is restricted',
    },
    {
      case: 'a startup taint with an unknown effect',
      path: ['spec', 'template', 'spec', 'startupTaints'],
      value: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoStart' }],
      message: 'spec.template.spec.startupTaints[0].effect: Unsupported value: "NoStart"',
    },
    {
      case: 'a nodeClassRef group containing a slash',
      path: ['spec', 'template', 'spec', 'nodeClassRef', 'group'],
      value: 'karpenter.azure.com/v1beta1',
      message: 'spec.template.spec.nodeClassRef.group in body should match',
    },
    {
      case: 'a nodeClassRef with an empty kind',
      path: ['spec', 'template', 'spec', 'nodeClassRef', 'kind'],
      value: '',
      message: 'kind may not be empty',
    },
    {
      case: 'an expireAfter in days',
      path: ['spec', 'template', 'spec', 'expireAfter'],
      value: '30d',
      message: 'spec.template.spec.expireAfter in body should match',
    },
    {
      case: 'a terminationGracePeriod of Never',
      path: ['spec', 'template', 'spec', 'terminationGracePeriod'],
      value: 'Never',
      message: 'spec.template.spec.terminationGracePeriod in body should match',
    },
    { case: 'a weight above 100', path: ['spec', 'weight'], value: 101, message: 'spec.weight' },
    {
      case: 'a weight on a static pool',
      path: ['spec'],
      value: { ...nodePool('unused').spec, replicas: 2, weight: 10 },
      message: "'weight' is not supported on static NodePools",
    },
    {
      case: 'a cpu limit on a static pool',
      path: ['spec'],
      value: { ...nodePool('unused').spec, replicas: 2, limits: { cpu: '10' } },
      message: "only 'limits.nodes' is supported on static NodePools",
    },
  ];

  it.each(rejected)('refuses $case', async ({ path, value, message: expected }) => {
    const body = withValue(nodePool(uniqueName('pool')), path, value);
    const { code, message } = await rejection(create(NodePoolResource, body));
    expect(code).toBe(422);
    expect(message).toContain(expected);
  });

  const accepted: { case: string; path: FieldPath; value: unknown }[] = [
    { case: 'a count budget of 0', path: budgetsPath, value: [{ nodes: '0' }] },
    { case: 'a 100% budget', path: budgetsPath, value: [{ nodes: '100%' }] },
    {
      case: 'scheduled budgets with reasons',
      path: budgetsPath,
      value: [
        { nodes: '0', schedule: '0 9 * * 1-5', duration: '8h', reasons: ['Drifted', 'Underutilized'] },
        { nodes: '20%', schedule: '@daily', duration: '1h30m0s', reasons: ['Empty'] },
      ],
    },
    {
      case: 'Exists and Gte requirements',
      path: ['spec', 'template', 'spec', 'requirements'],
      value: [
        { key: 'example.com/gpu', operator: 'Exists' },
        { key: WellKnown.skuCpuLabel, operator: 'Gte', values: ['2'] },
        { key: WellKnown.skuFamilyLabel, operator: 'In', values: ['D', 'E'], minValues: 2 },
        { key: WellKnown.capacityTypeLabel, operator: 'NotIn', values: ['spot'] },
      ],
    },
    {
      case: 'a compound consolidateAfter',
      path: ['spec', 'disruption', 'consolidateAfter'],
      value: '1h5m30s',
    },
    { case: 'the Balanced policy', path: ['spec', 'disruption', 'consolidationPolicy'], value: 'Balanced' },
    {
      case: 'a terminationGracePeriod',
      path: ['spec', 'template', 'spec', 'terminationGracePeriod'],
      value: '48h',
    },
    {
      case: 'template labels including karpenter.sh/capacity-type',
      path: ['spec', 'template', 'metadata', 'labels'],
      value: { [WellKnown.capacityTypeLabel]: 'on-demand', team: 'payments' },
    },
  ];

  it.each(accepted)('accepts $case and stores it as written', async ({ path, value }) => {
    const created = await create(NodePoolResource, withValue(nodePool(uniqueName('pool')), path, value));
    expect(valueAt(created, path)).toEqual(value);
  });

  it('accepts a static pool limited by node count', async () => {
    const spec = { ...nodePool('unused').spec, replicas: 3, limits: { nodes: '5' } };
    const created = await create(NodePoolResource, { ...nodePool(uniqueName('pool')), spec });
    expect(created.spec.replicas).toBe(3);
    expect(created.spec.limits).toEqual({ nodes: '5' });
  });

  it('defaults a budget without nodes to 10%', async () => {
    const body = withValue(nodePool(uniqueName('pool')), budgetsPath, [{ reasons: ['Drifted'] }]);
    const created = await create(NodePoolResource, body);
    expect(created.spec.disruption?.budgets).toEqual([
      { nodes: KarpenterDefaults.budgetNodes, reasons: ['Drifted'] },
    ]);
  });

  it('fills in the upstream defaults', async () => {
    const created = await create(NodePoolResource, nodePool(uniqueName('pool')));
    expect(created.spec.disruption).toEqual({
      budgets: [{ nodes: KarpenterDefaults.budgetNodes }],
      consolidateAfter: KarpenterDefaults.consolidateAfter,
      consolidationPolicy: KarpenterDefaults.consolidationPolicy,
    });
    expect(created.spec.template.spec.expireAfter).toBe(KarpenterDefaults.expireAfter);
  });

  it('lets the nodeClassRef name change but not its group or kind', async () => {
    const created = await create(NodePoolResource, nodePool(uniqueName('pool')));
    const reference = created.spec.template.spec.nodeClassRef;

    const renamed = await replace(
      NodePoolResource,
      withValue(created, ['spec', 'template', 'spec', 'nodeClassRef', 'name'], 'other'),
    );
    expect(renamed.spec.template.spec.nodeClassRef).toEqual({ ...reference, name: 'other' });

    const kindChange = await rejection(
      replace(
        NodePoolResource,
        withValue(renamed, ['spec', 'template', 'spec', 'nodeClassRef', 'kind'], 'Other'),
      ),
    );
    expect(kindChange.message).toContain('nodeClassRef.kind is immutable');
    const groupChange = await rejection(
      replace(
        NodePoolResource,
        withValue(renamed, ['spec', 'template', 'spec', 'nodeClassRef', 'group'], 'x.io'),
      ),
    );
    expect(groupChange.message).toContain('nodeClassRef.group is immutable');
  });

  it('refuses to switch a pool between static (replicas) and dynamic provisioning', async () => {
    const staticPool = await create(
      NodePoolResource,
      withValue(nodePool(uniqueName('pool')), ['spec', 'replicas'], 2),
    );
    const rescaled = await replace(NodePoolResource, withValue(staticPool, ['spec', 'replicas'], 4));
    expect(rescaled.spec.replicas).toBe(4);

    const toDynamic = structuredClone(rescaled);
    delete toDynamic.spec.replicas;
    const { code, message } = await rejection(replace(NodePoolResource, toDynamic));
    expect(code).toBe(422);
    expect(message).toContain(
      'Cannot transition NodePool between static (replicas set) and dynamic (replicas unset)',
    );

    const dynamicPool = await create(NodePoolResource, nodePool(uniqueName('pool')));
    const toStatic = await rejection(
      replace(NodePoolResource, withValue(dynamicPool, ['spec', 'replicas'], 1)),
    );
    expect(toStatic.message).toContain('Cannot transition NodePool between static');
  });
});

describe('AKSNodeClass', () => {
  it('written at v1alpha2 is readable at v1beta1 and the other way round, status included', async () => {
    const alphaName = uniqueName('class');
    await create(AKSNodeClassV1Alpha2Resource, aksNodeClass(alphaName, AKSNodeClassV1Alpha2Resource));
    const asBeta = await read<AKSNodeClass>(AKSNodeClassResource, alphaName);
    expect(asBeta.apiVersion).toBe('karpenter.azure.com/v1beta1');
    expect(asBeta.spec).toEqual({
      imageFamily: 'Ubuntu2204',
      osDiskSizeGB: AKSNodeClassDefaults.osDiskSizeGB,
    });

    const betaName = uniqueName('class');
    const betaBody = withValue(
      aksNodeClass(betaName, AKSNodeClassResource),
      ['spec', 'imageFamily'],
      'AzureLinux',
    );
    const createdBeta = await create(AKSNodeClassResource, betaBody);
    const status: AKSNodeClass['status'] = {
      kubernetesVersion: '1.34.1',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    };
    await replaceStatus(AKSNodeClassResource, { ...createdBeta, status });
    const asAlpha = await read<AKSNodeClass>(AKSNodeClassV1Alpha2Resource, betaName);
    expect(asAlpha.apiVersion).toBe('karpenter.azure.com/v1alpha2');
    expect(asAlpha.spec).toEqual({
      imageFamily: 'AzureLinux',
      osDiskSizeGB: AKSNodeClassDefaults.osDiskSizeGB,
    });
    expect(asAlpha.status).toEqual(status);
  });

  it('defaults the image family and kubelet settings as upstream does', async () => {
    const name = uniqueName('class');
    const created = await create(AKSNodeClassResource, {
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name },
      spec: { kubelet: {} },
    } satisfies AKSNodeClass);
    expect(created.spec).toEqual({
      imageFamily: AKSNodeClassDefaults.imageFamily,
      osDiskSizeGB: AKSNodeClassDefaults.osDiskSizeGB,
      kubelet: {
        cpuCFSQuota: true,
        cpuCFSQuotaPeriod: '100ms',
        cpuManagerPolicy: 'none',
        topologyManagerPolicy: 'none',
        containerLogMaxSize: '50Mi',
        containerLogMaxFiles: 5,
      },
    });
  });

  it('prunes fields the schema does not know, as upstream does', async () => {
    const name = uniqueName('class');
    const body = withValue(aksNodeClass(name, AKSNodeClassResource), ['spec', 'notAField'], 'x');
    const created = await create(AKSNodeClassResource, body);
    expect(created.spec).toEqual({
      imageFamily: 'Ubuntu2204',
      osDiskSizeGB: AKSNodeClassDefaults.osDiskSizeGB,
    });
  });

  it('accepts a fully specified class as written', async () => {
    const spec: AKSNodeClass['spec'] = {
      imageFamily: 'Ubuntu2404',
      osDiskSizeGB: 2048,
      maxPods: 250,
      vnetSubnetID:
        '/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/net-rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes',
      tags: { team: 'payments', 'cost-center': '42' },
      kubelet: {
        cpuCFSQuota: false,
        cpuCFSQuotaPeriod: '200ms',
        cpuManagerPolicy: 'static',
        topologyManagerPolicy: 'single-numa-node',
        imageGCHighThresholdPercent: 85,
        imageGCLowThresholdPercent: 80,
        containerLogMaxSize: '100Mi',
        containerLogMaxFiles: 10,
        podPidsLimit: 4096,
        allowedUnsafeSysctls: ['net.core.somaxconn'],
        failSwapOn: false,
      },
      linuxOSConfig: { swapFileSize: '2Gi', sysctls: { vmMaxMapCount: 262144 } },
      security: { encryptionAtHost: true },
      artifactStreaming: { enabled: true },
      gpu: { mode: 'None' },
    };
    const name = uniqueName('class');
    const created = await create(AKSNodeClassResource, { ...aksNodeClass(name, AKSNodeClassResource), spec });
    expect(created.spec).toEqual(spec);
  });

  const rejected: { case: string; path: FieldPath; value: unknown; message: string }[] = [
    {
      case: 'an unknown image family',
      path: ['spec', 'imageFamily'],
      value: 'Windows2022',
      message: 'spec.imageFamily: Unsupported value: "Windows2022"',
    },
    {
      case: 'an OS disk below 30 GB',
      path: ['spec', 'osDiskSizeGB'],
      value: 29,
      message:
        'spec.osDiskSizeGB: Invalid value: 29: spec.osDiskSizeGB in body should be greater than or equal to 30',
    },
    {
      case: 'an OS disk above 2048 GB',
      path: ['spec', 'osDiskSizeGB'],
      value: 2049,
      message: 'spec.osDiskSizeGB in body should be less than or equal to 2048',
    },
    {
      case: 'a vnetSubnetID that names no subnet',
      path: ['spec', 'vnetSubnetID'],
      value: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet',
      message: 'spec.vnetSubnetID in body should match',
    },
    {
      case: 'maxPods below 10',
      path: ['spec', 'maxPods'],
      value: 5,
      message: 'spec.maxPods in body should be greater than or equal to 10',
    },
    {
      case: 'image GC thresholds in the wrong order',
      path: ['spec', 'kubelet'],
      value: { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60 },
      message: 'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
    },
    {
      case: 'an unknown CPU manager policy',
      path: ['spec', 'kubelet', 'cpuManagerPolicy'],
      value: 'dynamic',
      message: 'spec.kubelet.cpuManagerPolicy: Unsupported value: "dynamic"',
    },
    {
      case: 'a container log size without a binary unit',
      path: ['spec', 'kubelet', 'containerLogMaxSize'],
      value: '50MB',
      message: 'spec.kubelet.containerLogMaxSize in body should match',
    },
    {
      case: 'fewer than two container log files',
      path: ['spec', 'kubelet', 'containerLogMaxFiles'],
      value: 1,
      message: 'spec.kubelet.containerLogMaxFiles in body should be greater than or equal to 2',
    },
    {
      case: 'a swap file while kubelet fails on swap',
      path: ['spec', 'linuxOSConfig'],
      value: { swapFileSize: '1Gi' },
      message: 'kubelet.failSwapOn must be set to false when linuxOSConfig.swapFileSize is specified',
    },
  ];

  const versions = [AKSNodeClassResource, AKSNodeClassV1Alpha2Resource];
  const cases = versions.flatMap((resource) =>
    rejected.map((entry) => ({ ...entry, resource, version: resource.version })),
  );

  it.each(cases)('refuses $case at $version', async ({ resource, path, value, message: expected }) => {
    const body = withValue(aksNodeClass(uniqueName('class'), resource), path, value);
    const { code, message } = await rejection(create(resource, body));
    expect(code).toBe(422);
    expect(message).toContain(expected);
  });
});
