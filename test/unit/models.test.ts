// The TypeScript vocabulary (resource coordinates, default values, enums) must agree with the CRD manifests
// the API server enforces; these checks read the manifests, so a change to one side without the other fails.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  AKSNodeClassResource,
  AKSNodeClassV1Alpha2Resource,
  NodeClaimResource,
  NodePoolResource,
  apiVersionOf,
  type CustomResourceName,
} from '../../shared/kube/crd-names.js';
import {
  AKS_SERVED_VERSIONS,
  AKS_STORAGE_VERSION,
  AKSNodeClassDefaults,
  KarpenterDefaults,
  type ConsolidationPolicy,
  type DisruptionReason,
  type ImageFamily,
  type RequirementOperator,
  type TaintEffect,
} from '../../shared/models/index.js';

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  default?: unknown;
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object };
  schema: { openAPIV3Schema: Schema };
}

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope: string;
    conversion?: { strategy: string };
    versions: CrdVersion[];
  };
}

function loadCrd(file: string): Crd {
  const path = fileURLToPath(new URL(`../../infra/k8s/crds/${file}`, import.meta.url));
  return parse(readFileSync(path, 'utf8')) as Crd;
}

function version(crd: Crd, name: string): CrdVersion {
  const found = crd.spec.versions.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`${crd.metadata.name} has no version ${name}`);
  return found;
}

function schemaAt(crd: Crd, versionName: string, path: string): Schema {
  let node: Schema = version(crd, versionName).schema.openAPIV3Schema;
  for (const key of path.split('.')) {
    const next = key === '[]' ? node.items : node.properties?.[key];
    if (!next) throw new Error(`${crd.metadata.name}/${versionName} has no ${path}`);
    node = next;
  }
  return node;
}

const nodePools = loadCrd('karpenter.sh_nodepools.yaml');
const nodeClaims = loadCrd('karpenter.sh_nodeclaims.yaml');
const aksNodeClasses = loadCrd('karpenter.azure.com_aksnodeclasses.yaml');

describe('resource coordinates', () => {
  const cases: { resource: CustomResourceName; crd: Crd }[] = [
    { resource: NodePoolResource, crd: nodePools },
    { resource: NodeClaimResource, crd: nodeClaims },
    { resource: AKSNodeClassResource, crd: aksNodeClasses },
    { resource: AKSNodeClassV1Alpha2Resource, crd: aksNodeClasses },
  ];

  it.each(cases)(
    '$resource.kind $resource.version names a served, cluster-scoped version',
    ({ resource, crd }) => {
      expect(crd.metadata.name).toBe(`${resource.plural}.${resource.group}`);
      expect(crd.spec.group).toBe(resource.group);
      expect(crd.spec.names).toMatchObject({ kind: resource.kind, plural: resource.plural });
      expect(crd.spec.scope).toBe('Cluster');
      expect(version(crd, resource.version).served).toBe(true);
      expect(version(crd, resource.version).subresources?.status).toEqual({});
    },
  );

  it('stores AKSNodeClass at the storage version the models name, with no conversion webhook', () => {
    const stored = aksNodeClasses.spec.versions.filter((candidate) => candidate.storage).map((v) => v.name);
    expect(stored).toEqual([AKS_STORAGE_VERSION]);
    expect(AKSNodeClassResource.version).toBe(AKS_STORAGE_VERSION);
    expect(aksNodeClasses.spec.versions.map((v) => v.name).sort()).toEqual([...AKS_SERVED_VERSIONS].sort());
    expect(aksNodeClasses.spec.conversion).toEqual({ strategy: 'None' });
    // Without conversion the versions must share one schema, or objects would change shape between them.
    expect(version(aksNodeClasses, 'v1alpha2').schema).toEqual(version(aksNodeClasses, 'v1beta1').schema);
  });

  it('builds apiVersion strings', () => {
    expect(apiVersionOf(NodeClaimResource)).toBe('karpenter.sh/v1');
    expect(apiVersionOf(AKSNodeClassV1Alpha2Resource)).toBe('karpenter.azure.com/v1alpha2');
  });
});

describe('defaults and enums', () => {
  it('match the NodePool and NodeClaim schema', () => {
    const disruption = 'spec.disruption';
    expect(schemaAt(nodePools, 'v1', `${disruption}.budgets`).default).toEqual([
      { nodes: KarpenterDefaults.budgetNodes },
    ]);
    expect(schemaAt(nodePools, 'v1', `${disruption}.consolidateAfter`).default).toBe(
      KarpenterDefaults.consolidateAfter,
    );
    expect(schemaAt(nodePools, 'v1', `${disruption}.consolidationPolicy`).default).toBe(
      KarpenterDefaults.consolidationPolicy,
    );
    expect(schemaAt(nodePools, 'v1', 'spec.template.spec.expireAfter').default).toBe(
      KarpenterDefaults.expireAfter,
    );
    expect(schemaAt(nodeClaims, 'v1', 'spec.expireAfter').default).toBe(KarpenterDefaults.expireAfter);

    const policies: ConsolidationPolicy[] = ['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced'];
    expect(schemaAt(nodePools, 'v1', `${disruption}.consolidationPolicy`).enum?.sort()).toEqual(
      policies.sort(),
    );
    const reasons: DisruptionReason[] = ['Drifted', 'Underutilized', 'Empty'];
    expect(schemaAt(nodePools, 'v1', `${disruption}.budgets.[].reasons.[]`).enum?.sort()).toEqual(
      reasons.sort(),
    );
    const operators: RequirementOperator[] = [
      'In',
      'NotIn',
      'Exists',
      'DoesNotExist',
      'Gt',
      'Lt',
      'Gte',
      'Lte',
    ];
    expect(schemaAt(nodeClaims, 'v1', 'spec.requirements.[].operator').enum?.sort()).toEqual(
      operators.sort(),
    );
    const effects: TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
    expect(schemaAt(nodeClaims, 'v1', 'spec.taints.[].effect').enum?.sort()).toEqual(effects.sort());
  });

  it('match the AKSNodeClass schema', () => {
    expect(schemaAt(aksNodeClasses, AKS_STORAGE_VERSION, 'spec.imageFamily').default).toBe(
      AKSNodeClassDefaults.imageFamily,
    );
    expect(schemaAt(aksNodeClasses, AKS_STORAGE_VERSION, 'spec.osDiskSizeGB').default).toBe(
      AKSNodeClassDefaults.osDiskSizeGB,
    );
    const families: ImageFamily[] = ['Ubuntu', 'Ubuntu2204', 'Ubuntu2404', 'AzureLinux'];
    expect(schemaAt(aksNodeClasses, AKS_STORAGE_VERSION, 'spec.imageFamily').enum?.sort()).toEqual(
      families.sort(),
    );
  });

  it('has maxPods on the spec and not in kubelet, where the models mark it deprecated', () => {
    const kubelet = schemaAt(aksNodeClasses, AKS_STORAGE_VERSION, 'spec.kubelet').properties ?? {};
    expect(Object.keys(kubelet)).not.toContain('maxPods');
    expect(Object.keys(schemaAt(aksNodeClasses, AKS_STORAGE_VERSION, 'spec').properties ?? {})).toContain(
      'maxPods',
    );
  });
});
