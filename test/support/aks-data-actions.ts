// The Azure RBAC data actions a set of Kubernetes RBAC rules needs on an AKS cluster with Azure RBAC for
// Kubernetes authorization, mapped as AKS's authorization webhook (kubeguard/guard) maps a request:
// get/list/watch → read, create/update/patch → write, delete/deletecollection → delete; a subresource
// is authorized as its resource (pods/exec excepted); built-in resources are
// Microsoft.ContainerService/managedClusters/[<group>/]<resource>/<verb>, and custom resources share
// …/customresources/<verb>, narrowed to their group and resource by an ABAC condition on the assignment
// (learn.microsoft.com/azure/aks/entra-id-authorization). Used to hold infra/azure-roles.json's AKS
// roles to the ClusterRole and Roles in infra/k8s/functions.

const CLUSTER = 'Microsoft.ContainerService/managedClusters';

/**
 * API groups with data actions of their own ("Azure permissions for Containers"); every other group is
 * a custom resource's.
 */
const BUILT_IN_GROUPS = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'extensions',
  'flowcontrol.apiserver.k8s.io',
  'metrics.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
]);

export interface KubernetesRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

export interface CustomResourceAccess {
  group: string;
  resource: string;
  /** read, write and/or delete, in that order. */
  access: string[];
}

export interface AksDataActions {
  dataActions: string[];
  customResources: CustomResourceAccess[];
}

const VERB_ORDER = ['read', 'write', 'delete'];

function dataVerb(verb: string): string {
  if (['get', 'list', 'watch'].includes(verb)) return 'read';
  if (['create', 'update', 'patch'].includes(verb)) return 'write';
  if (['delete', 'deletecollection'].includes(verb)) return 'delete';
  if (['bind', 'escalate', 'use', 'impersonate'].includes(verb)) return `${verb}/action`;
  throw new Error(`no Azure RBAC data action for the verb ${verb}`);
}

export function aksDataActions(rules: readonly KubernetesRule[]): AksDataActions {
  const dataActions = new Set<string>();
  const custom = new Map<string, CustomResourceAccess>();
  for (const rule of rules)
    for (const group of rule.apiGroups ?? [''])
      for (const named of rule.resources ?? []) {
        const [resource = '', subresource] = named.split('/');
        for (const verb of rule.verbs) {
          if (BUILT_IN_GROUPS.has(group)) {
            const action = resource === 'pods' && subresource === 'exec' ? 'exec/action' : dataVerb(verb);
            dataActions.add([CLUSTER, ...(group ? [group] : []), resource, action].join('/'));
            continue;
          }
          const key = `${group}/${resource}`;
          const entry = custom.get(key) ?? { group, resource, access: [] };
          const access = dataVerb(verb);
          if (!entry.access.includes(access)) entry.access.push(access);
          custom.set(key, entry);
        }
      }
  const customResources = [...custom.values()]
    .map((entry) => ({
      ...entry,
      access: VERB_ORDER.filter((verb) => entry.access.includes(verb)),
    }))
    .sort((a, b) => `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`));
  for (const verb of VERB_ORDER)
    if (customResources.some((entry) => entry.access.includes(verb)))
      dataActions.add(`${CLUSTER}/customresources/${verb}`);
  return { dataActions: [...dataActions].sort(), customResources };
}

/**
 * The ABAC condition (version 2.0) that limits each custom-resource data action to the groups and
 * resources granted it; every other data action passes through unchanged.
 */
export function customResourceCondition(customResources: readonly CustomResourceAccess[]): string {
  const attribute = (name: string) => `@Request[${CLUSTER}/customResources:${name}]`;
  return VERB_ORDER.filter((verb) => customResources.some((entry) => entry.access.includes(verb)))
    .map((verb) => {
      const allowed = customResources
        .filter((entry) => entry.access.includes(verb))
        .map(
          (entry) =>
            `(${attribute('group')} StringEqualsIgnoreCase '${entry.group}' AND ${attribute('kind')} StringEqualsIgnoreCase '${entry.resource}')`,
        )
        .join(' OR ');
      return `((!(ActionMatches{'${CLUSTER}/customresources/${verb}'})) OR (${allowed}))`;
    })
    .join(' AND ');
}
