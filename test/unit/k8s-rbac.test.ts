// The functions' Kubernetes RBAC (infra/k8s/functions/) grants exactly what the code does. The verbs
// are derived from the code's API calls: direct @kubernetes/client-node calls (readNode, listNode,
// deleteNamespacedPod, createNamespacedPodEviction, replaceNamespacedLease, …, decoded from the method
// name) and the custom-object adapters' methods on nodeClaims / nodePools / nodeClasses / nodeOverlays /
// capacityBuffers. A new call the
// roles lack fails here instead of with a 403 in the cluster (as a drain past terminationGracePeriod
// once would have, for want of `delete` on pods); a verb nothing uses fails too. Watches are seen where a
// Reflector names its collection. What this static reading cannot see, the integration and end-to-end
// tests catch: the app runs there as a user bound to exactly these roles (local/stack/identities.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_NAMESPACE } from '../../shared/config/settings.js';
import { DEFAULT_SWEEP_LEASE } from '../../shared/lifecycle/sweep/sweep.js';
import { DISRUPTION_MARKS_LEASE } from '../../shared/lifecycle/disruption/budget-at-mark.js';

const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => relative(root, join(root, dir, f)));
}
/** Code that runs in the Function App (the bridge has its own read-only role in k8s/bridge). */
const appFiles = [...sourceFiles('shared'), ...sourceFiles('functions')];
const code = (file: string): string =>
  readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

/** "group|resource|verb" (namespace-qualified for namespaced Roles: "group|resource|verb@namespace/name"). */
type Permission = string;

const verbOf: Record<string, string> = {
  read: 'get',
  list: 'list',
  create: 'create',
  replace: 'update',
  patch: 'patch',
  delete: 'delete',
  watch: 'watch',
};
/** Kinds of the core and coordination APIs, as they appear in client-node method names. */
const kinds: Record<string, { group: string; resource: string }> = {
  Node: { group: '', resource: 'nodes' },
  Pod: { group: '', resource: 'pods' },
  PodEviction: { group: '', resource: 'pods/eviction' },
  Event: { group: '', resource: 'events' },
  PodDisruptionBudget: { group: 'policy', resource: 'poddisruptionbudgets' },
  Lease: { group: 'coordination.k8s.io', resource: 'leases' },
  Secret: { group: '', resource: 'secrets' },
  DaemonSet: { group: 'apps', resource: 'daemonsets' },
  PodTemplate: { group: '', resource: 'podtemplates' },
  Deployment: { group: 'apps', resource: 'deployments' },
  StatefulSet: { group: 'apps', resource: 'statefulsets' },
  ReplicaSet: { group: 'apps', resource: 'replicasets' },
  PersistentVolumeClaim: { group: '', resource: 'persistentvolumeclaims' },
  PersistentVolume: { group: '', resource: 'persistentvolumes' },
  SubjectAccessReview: { group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
};
/** The custom-object adapter (shared/kube/custom-objects.ts): its methods and the verb each sends. */
const adapterVerbs: Record<string, { verb: string; subresource?: string }> = {
  get: { verb: 'get' },
  list: { verb: 'list' },
  create: { verb: 'create' },
  mergePatch: { verb: 'patch' },
  jsonPatch: { verb: 'patch' },
  mergePatchStatus: { verb: 'patch', subresource: 'status' },
  delete: { verb: 'delete' },
};
const adapterMembers: Record<string, { group: string; resource: string }> = {
  nodeClaims: { group: 'karpenter.sh', resource: 'nodeclaims' },
  nodePools: { group: 'karpenter.sh', resource: 'nodepools' },
  nodeClasses: { group: 'karpenter.azure.com', resource: 'aksnodeclasses' },
  nodeOverlays: { group: 'karpenter.sh', resource: 'nodeoverlays' },
  capacityBuffers: { group: 'autoscaling.x-k8s.io', resource: 'capacitybuffers' },
};

interface Use {
  permission: Permission;
  where: string;
}

function usesInCode(): Use[] {
  const uses: Use[] = [];
  for (const file of appFiles) {
    const text = code(file);
    for (const m of text.matchAll(
      /\b(?:core|api|policy|apps|authorization)\.(read|list|create|replace|patch|delete|watch)(Namespaced)?(\w+?)(ForAllNamespaces)?\(/g,
    )) {
      const kind = kinds[m[3] as string];
      if (!kind) throw new Error(`${file}: no RBAC mapping for ${m[0]} (add the kind to this test)`);
      uses.push({
        permission: `${kind.group}|${kind.resource}|${verbOf[m[1] as string]}`,
        where: `${file}: ${m[0]}`,
      });
    }
    for (const m of text.matchAll(
      /\b(nodeClaims|nodePools|nodeClasses|nodeOverlays|capacityBuffers)\.(\w+)\(/g,
    )) {
      const member = adapterMembers[m[1] as string];
      const method = adapterVerbs[m[2] as string];
      if (!member || !method) continue; // array methods on lists of the same name (map, filter, …)
      const resource = method.subresource ? `${member.resource}/${method.subresource}` : member.resource;
      uses.push({ permission: `${member.group}|${resource}|${method.verb}`, where: `${file}: ${m[0]}` });
    }
    // Watches: a Reflector (shared/kube/reflector.ts) watches the collection its source names, either as
    // a literal API path or as an adapter collection's collectionPath.
    if (!/\bnew Reflector\b/.test(text)) continue;
    for (const m of text.matchAll(/\bpath: '\/api(?:s\/([\w.]+))?\/v\w+\/(\w+)'/g)) {
      uses.push({ permission: `${m[1] ?? ''}|${m[2]}|watch`, where: `${file}: ${m[0]}` });
    }
    for (const m of text.matchAll(
      /\w+Reflector<\w+>\('\w+', objects\.(nodeClaims|nodePools|nodeClasses)\)/g,
    )) {
      const member = adapterMembers[m[1] as string];
      if (member)
        uses.push({ permission: `${member.group}|${member.resource}|watch`, where: `${file}: ${m[0]}` });
    }
  }
  return uses;
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string }>;
}

const manifests = [
  'clusterrole.yaml',
  'lease-role.yaml',
  'bootstrap-token-role.yaml',
  'bindings.yaml',
].flatMap((file) =>
  parseAllDocuments(readFileSync(join(root, 'infra', 'k8s', 'functions', file), 'utf8')).map(
    (d) => d.toJS() as RbacObject,
  ),
);
const clusterRole = manifests.find((o) => o.kind === 'ClusterRole') as RbacObject;
const leaseRole = manifests.find((o) => o.metadata.name === 'nodeclaim-functions-sweep-lease') as RbacObject;
const tokenRole = manifests.find(
  (o) => o.metadata.name === 'nodeclaim-functions-bootstrap-tokens',
) as RbacObject;

function granted(rules: readonly Rule[]): Set<Permission> {
  const permissions = new Set<Permission>();
  for (const rule of rules)
    for (const group of rule.apiGroups)
      for (const resource of rule.resources)
        for (const verb of rule.verbs) permissions.add(`${group}|${resource}|${verb}`);
  return permissions;
}

describe("the functions' Kubernetes RBAC", () => {
  const uses = usesInCode();
  const used = new Set(uses.map((u) => u.permission));
  const leaseUses = [...used].filter((p) => p.startsWith('coordination.k8s.io|'));
  const secretUses = [...used].filter((p) => p.startsWith('|secrets|'));
  const clusterUses = [...used].filter(
    (p) => !p.startsWith('coordination.k8s.io|') && !p.startsWith('|secrets|'),
  );

  it('finds the calls it reasons about (the derivation is not empty)', () => {
    expect(used).toContain('|pods|delete');
    expect(used).toContain('|pods/eviction|create');
    expect(used).toContain('karpenter.sh|nodeclaims/status|patch');
    expect(used).toContain('coordination.k8s.io|leases|update');
    // The watch-fed cluster reader's six kinds.
    for (const watched of [
      'karpenter.sh|nodeclaims',
      'karpenter.sh|nodepools',
      'karpenter.azure.com|aksnodeclasses',
      '|nodes',
      '|pods',
      'policy|poddisruptionbudgets',
    ])
      expect(used).toContain(`${watched}|watch`);
  });

  it('the ClusterRole grants every cluster call the code makes', () => {
    const rules = granted(clusterRole.rules ?? []);
    const missing = uses.filter((u) => clusterUses.includes(u.permission) && !rules.has(u.permission));
    expect(missing.map((u) => `${u.permission} (${u.where})`)).toEqual([]);
  });

  it('bootstrap token Secrets: create and delete in kube-system only (never get), exactly what the code does', () => {
    expect(secretUses.sort()).toEqual(['|secrets|create', '|secrets|delete']);
    expect(tokenRole.metadata.namespace).toBe('kube-system');
    expect([...granted(tokenRole.rules ?? [])].sort()).toEqual(secretUses.sort());
    expect(granted(clusterRole.rules ?? []).has('|secrets|get')).toBe(false);
  });

  it('the ClusterRole grants nothing the code does not use, and no wildcard', () => {
    const extra = [...granted(clusterRole.rules ?? [])].filter((p) => !used.has(p));
    expect(extra).toEqual([]);
    expect(JSON.stringify(clusterRole.rules)).not.toContain('*');
  });

  it('the sweep and disruption-marks Leases are reachable only by their names, except create (which RBAC cannot limit by name)', () => {
    // In the app's own namespace, never kube-system, where create would reach every Lease of the system.
    expect(leaseRole.metadata.namespace).toBe(DEFAULT_SYSTEM_NAMESPACE);
    const rules = leaseRole.rules ?? [];
    for (const rule of rules) {
      expect(rule.apiGroups).toEqual(['coordination.k8s.io']);
      expect(rule.resources).toEqual(['leases']);
      if (rule.resourceNames)
        expect(rule.resourceNames).toEqual([DEFAULT_SWEEP_LEASE.name, DISRUPTION_MARKS_LEASE.name]);
      else expect(rule.verbs).toEqual(['create']);
    }
    expect([...granted(rules)].sort()).toEqual([...leaseUses].sort());
  });

  it('authorization.k8s.io: create on subjectaccessreviews only (explain), no other resource or verb of the group', () => {
    expect(used).toContain('authorization.k8s.io|subjectaccessreviews|create');
    const authorizationGrants = [...granted(clusterRole.rules ?? [])].filter((p) =>
      p.startsWith('authorization.k8s.io|'),
    );
    expect(authorizationGrants).toEqual(['authorization.k8s.io|subjectaccessreviews|create']);
    const rule = (clusterRole.rules ?? []).find((r) => r.apiGroups.includes('authorization.k8s.io'));
    expect(rule).toEqual({
      apiGroups: ['authorization.k8s.io'],
      resources: ['subjectaccessreviews'],
      verbs: ['create'],
    });
  });

  it('binds every role to the Function App identity placeholder the deploy hook fills in', () => {
    const bindings = manifests.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    expect(bindings.map((b) => b.roleRef?.name).sort()).toEqual(
      [clusterRole.metadata.name, leaseRole.metadata.name, tokenRole.metadata.name].sort(),
    );
    for (const binding of bindings)
      expect(binding.subjects).toEqual([
        expect.objectContaining({ kind: 'User', name: 'FUNCTION_PRINCIPAL_ID' }),
      ]);
    const roleNamespace = new Map([
      [leaseRole.metadata.name, leaseRole.metadata.namespace],
      [tokenRole.metadata.name, tokenRole.metadata.namespace],
    ]);
    for (const binding of bindings.filter((b) => b.kind === 'RoleBinding'))
      expect(binding.metadata.namespace).toBe(roleNamespace.get(binding.roleRef?.name ?? ''));
  });
});
