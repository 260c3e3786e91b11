// Every built-in role definition ID the templates assign comes from one table, infra/azure-roles.json,
// which Bicep reads with loadJsonContent and Terraform with jsondecode(file()). A GUID typed into a
// template (as the Storage Blob Data Owner ID once was, wrong in its last group) fails here, before a
// deployment fails on a role assignment and never creates the Function App that depends on it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ASSIGNMENT_SCOPES, type AssignmentScope } from '../../local/stack/azure-role-assignments.js';
import {
  aksDataActions,
  customResourceCondition,
  type CustomResourceAccess,
  type KubernetesRule,
} from '../support/aks-data-actions.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface RoleTable {
  source: string;
  roles: Record<string, string>;
}
const table = JSON.parse(read('infra/azure-roles.json')) as RoleTable;

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(extension))
    .map((file) => relative(root, join(root, dir, file)));
}
const bicepFiles = filesUnder('infra/bicep', '.bicep');
const terraformFiles = filesUnder('infra/terraform', '.tf');

const guid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** GUIDs in the templates that are not role definitions. */
const otherGuids = new Map([
  [
    '6dae42f8-4368-4678-94ff-3960e28e3630',
    'the AKS AAD server application (KUBE_TOKEN_SCOPE), the same in every tenant',
  ],
]);

/** Names looked up in the table: builtInRoles['…'] / loadJsonContent(…)['…'] in Bicep, built_in_roles["…"] in Terraform. */
function bicepRoleNames(text: string): string[] {
  return [...text.matchAll(/(?:builtInRoles|'\$\.roles'\))\['([^']+)'\]/g)].map((m) => m[1] as string);
}
function terraformRoleNames(text: string): string[] {
  return [...text.matchAll(/local\.built_in_roles\["([^"]+)"\]/g)].map((m) => m[1] as string);
}

describe('the role table', () => {
  it("names Microsoft's list as its source and holds one well-formed, distinct ID per role", () => {
    expect(table.source).toBe('https://learn.microsoft.com/azure/role-based-access-control/built-in-roles');
    const ids = Object.values(table.roles);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has the published IDs of the storage roles the Functions host needs', () => {
    // From the Storage page of the built-in roles list; the first of these was once typed wrong.
    expect(table.roles['Storage Blob Data Owner']).toBe('b7e6dc6d-f1e8-4753-8033-0f276bb0955b');
    expect(table.roles['Storage Queue Data Contributor']).toBe('974c5e8b-45b9-4653-ba55-5f855dd0fb88');
    expect(table.roles['Storage Table Data Contributor']).toBe('0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3');
  });

  it('is used: every role in it is assigned by at least one template', () => {
    const used = new Set([
      ...bicepFiles.flatMap((file) => bicepRoleNames(read(file))),
      ...terraformFiles.flatMap((file) => terraformRoleNames(read(file))),
      ...[...read('infra/terraform/rbac.tf').matchAll(/^\s*"([^"]+)",$/gm)].map((m) => m[1] as string),
    ]);
    expect(Object.keys(table.roles).filter((name) => !used.has(name))).toEqual([]);
  });
});

describe.each([
  ['Bicep', bicepFiles],
  ['Terraform', terraformFiles],
])('%s templates', (_tool, files) => {
  it('write no role definition ID themselves (every GUID is a known non-role one)', () => {
    const typed = files.flatMap((file) =>
      [...read(file).matchAll(guid)]
        .map((m) => m[0].toLowerCase())
        .filter((id) => !otherGuids.has(id))
        .map((id) => `${file}: ${id}`),
    );
    expect(typed).toEqual([]);
  });
});

describe('Bicep', () => {
  it('reads the table and looks up only roles it has', () => {
    const names = bicepFiles.flatMap((file) => bicepRoleNames(read(file)));
    expect(names).toContain('Storage Blob Data Owner');
    expect(names.filter((name) => !(name in table.roles))).toEqual([]);
    for (const file of bicepFiles.filter((f) => bicepRoleNames(read(f)).length > 0)) {
      expect(read(file), file).toMatch(/loadJsonContent\('(\.\.\/)+azure-roles\.json', '\$\.roles'\)/);
    }
  });

  it('builds every roleDefinitionId from the table or from a custom role defined in the template', () => {
    for (const file of bicepFiles) {
      const text = read(file);
      for (const m of text.matchAll(/roleDefinitionId:\s*/g)) {
        const start = (m.index ?? 0) + m[0].length;
        const rest = text.slice(start);
        const expression = rest.startsWith('subscriptionResourceId(')
          ? rest.slice(0, rest.indexOf(')') + 1).replace(/\s+/g, ' ')
          : rest.slice(0, rest.indexOf('\n'));
        // A custom role definition of the template (roleIds.<role>), or its ID passed to a module.
        if (/^roleIds\.\w+$|^\w+RoleId$/.test(expression)) continue;
        expect(expression, file).toMatch(
          /^subscriptionResourceId\( ?'Microsoft\.Authorization\/roleDefinitions', ?[\w.]+ ?\)$/,
        );
      }
    }
  });
});

describe('Terraform', () => {
  const main = read('infra/terraform/main.tf');

  it('reads the table and looks up only roles it has', () => {
    expect(main).toMatch(
      /built_in_roles\s*=\s*jsondecode\(file\("\$\{path\.module\}\/\.\.\/azure-roles\.json"\)\)\.roles/,
    );
    const names = terraformFiles.flatMap((file) => terraformRoleNames(read(file)));
    const storageRoles = [...read('infra/terraform/rbac.tf').matchAll(/^\s*"(Storage [^"]+)",$/gm)].map(
      (m) => m[1] as string,
    );
    expect(storageRoles).toHaveLength(3);
    expect([...names, ...storageRoles].filter((name) => !(name in table.roles))).toEqual([]);
  });

  it('assigns by ID from the table or a custom role, never by display name', () => {
    for (const file of terraformFiles) {
      const text = read(file);
      expect(text, file).not.toMatch(/role_definition_name\s*=/);
      for (const m of text.matchAll(/role_definition_id\s*=\s*(.+)/g)) {
        expect(m[1], file).toMatch(
          /^"\$\{local\.role_definition_prefix\}\$\{local\.built_in_roles\[[^\]]+\]\}"$|^azurerm_role_definition\.custom\["\w+"\]\.role_definition_resource_id$/,
        );
      }
    }
  });
});

const roleTable = JSON.parse(read('infra/azure-roles.json')) as { customRoles: Record<string, CustomRole> };
const customRoles = roleTable.customRoles;

interface CustomRole {
  roleName: string;
  description: string;
  assignedAt: AssignmentScope;
  actions: string[];
  dataActions?: string[];
  namespace?: string;
  customResources?: CustomResourceAccess[];
  condition?: string;
}

/** The text of one top-level Bicep declaration (`resource x …` / `module x …`) up to the next. */
function bicepDeclaration(text: string, symbol: string): string {
  const start = text.search(new RegExp(`^(resource|module) ${symbol} `, 'm'));
  if (start < 0) throw new Error(`no declaration ${symbol}`);
  const next = text.slice(start + 1).search(/^(resource|module|var|param|output) /m);
  return next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
}

/** The body of one Terraform resource block, `resource "<type>" "<name>" { … }`. */
function terraformResource(text: string, type: string, name: string): string {
  const start = text.indexOf(`resource "${type}" "${name}" {`);
  if (start < 0) throw new Error(`no resource ${type}.${name}`);
  const end = text.indexOf('\n}\n', start);
  return text.slice(start, end + 2);
}

/**
 * For each scope of the table's vocabulary (the scopes the ARM emulator resolves too,
 * local/stack/azure-role-assignments.ts), how each template assigns a role there: the Bicep module (or
 * resource) and what fixes its scope, and the Terraform assignment with its scope and repetition.
 */
const ASSIGNERS: Record<
  AssignmentScope,
  {
    bicep: { symbol: string; scope: RegExp; module?: string; target?: RegExp };
    terraform: { name: string; scope: RegExp };
  }
> = {
  subscription: {
    bicep: {
      symbol: 'computeReader',
      scope: /^resource computeReader 'Microsoft\.Authorization\/roleAssignments/,
    },
    terraform: {
      name: 'function_compute_catalog_reader',
      scope: /scope\s+= data\.azurerm_subscription\.current\.id/,
    },
  },
  nodeResourceGroup: {
    bicep: {
      symbol: 'nodeRoles',
      scope: /scope: resourceGroup\(nodeResourceGroupName\)/,
      module: 'rbac/node-resource-group-roles.bicep',
      target:
        /resource vmOperator 'Microsoft\.Authorization\/roleAssignments@[^']+' = \{\n {2}name: guid\(resourceGroup\(\)\.id/,
    },
    terraform: { name: 'function_vm_operator', scope: /scope\s+= local\.node_resource_group_id/ },
  },
  nodeSubnet: {
    bicep: {
      symbol: 'subnetRoles',
      scope: /scope: resourceGroup\(subnetSubscriptionId, subnetResourceGroupName\)/,
      module: 'rbac/subnet-roles.bicep',
      target: /scope: vnet::subnet\n/,
    },
    terraform: { name: 'function_subnet_join', scope: /scope\s+= var\.node_subnet_id/ },
  },
  kubeletIdentity: {
    bicep: {
      symbol: 'kubeletIdentityRoles',
      scope:
        /scope: resourceGroup\(kubeletIdentityParts\[2\], kubeletIdentityParts\[4\]\)[^]*kubeletIdentityName: kubeletIdentityParts\[8\]/,
      module: 'rbac/kubelet-identity-roles.bicep',
      target:
        /resource kubeletIdentity 'Microsoft\.ManagedIdentity\/userAssignedIdentities@[^']+' existing[^]*scope: kubeletIdentity\n/,
    },
    terraform: {
      name: 'function_kubelet_identity_assigner',
      scope: /scope\s+= local\.cluster_inputs\.kubelet_identity_resource_id/,
    },
  },
  outboundBackendPool: {
    bicep: {
      symbol: 'outboundPoolRoles',
      scope:
        /for \(poolId, index\) in outboundPoolIds[^]*scope: resourceGroup\(split\(poolId, '\/'\)\[2\], split\(poolId, '\/'\)\[4\]\)/,
      module: 'rbac/outbound-pool-roles.bicep',
      target: /resource backendPool 'backendAddressPools' existing[^]*scope: loadBalancer::backendPool\n/,
    },
    terraform: {
      name: 'function_outbound_pool_joiner',
      scope: /for_each\s+= local\.outbound_pool_ids\n\s+scope\s+= each\.value/,
    },
  },
  nodeSecurityGroup: {
    bicep: {
      symbol: 'nodeSecurityGroupRoles',
      scope:
        /= if \(attachNsgToNic\)[^]*scope: resourceGroup\(nodeSecurityGroupParts\[2\], nodeSecurityGroupParts\[4\]\)/,
      module: 'rbac/node-security-group-roles.bicep',
      target:
        /resource nodeSecurityGroup 'Microsoft\.Network\/networkSecurityGroups@[^']+' existing[^]*scope: nodeSecurityGroup\n/,
    },
    terraform: {
      name: 'function_node_security_group_joiner',
      scope:
        /count\s+= var\.attach_nsg_to_nic \? 1 : 0\n\s+scope\s+= local\.cluster_inputs\.node_security_group_id/,
    },
  },
  capacityReservationGroup: {
    bicep: {
      symbol: 'capacityReservationGroupRoles',
      scope:
        /for \(groupId, index\) in capacityReservationGroupIds[^]*scope: resourceGroup\(split\(groupId, '\/'\)\[2\], split\(groupId, '\/'\)\[4\]\)/,
      module: 'rbac/capacity-reservation-group-roles.bicep',
      target:
        /resource group 'Microsoft\.Compute\/capacityReservationGroups@[^']+' existing[^]*scope: group\n/,
    },
    terraform: {
      name: 'function_capacity_reservation_user',
      scope: /for_each\s+= toset\(var\.capacity_reservation_group_ids\)\n\s+scope\s+= each\.value/,
    },
  },
  aksCluster: {
    bicep: {
      symbol: 'clusterRoles',
      scope: /= if \(azureRbac\)[^]*scope: resourceGroup\(aksClusterResourceGroupName\)/,
      module: 'rbac/cluster-roles.bicep',
      target:
        /resource clusterAccess [^]*scope: cluster\n[^]*condition: customRoles\.kubernetesClusterAccess\.condition\n\s+conditionVersion: '2\.0'/,
    },
    terraform: {
      name: 'function_kubernetes_cluster_access',
      scope:
        /count\s+= local\.azure_rbac \? 1 : 0\n\s+scope\s+= data\.azurerm_kubernetes_cluster\.target\.id[^]*condition\s+= local\.custom_roles\.kubernetesClusterAccess\.condition\n\s+condition_version\s+= "2\.0"/,
    },
  },
  aksNamespace: {
    bicep: {
      symbol: 'clusterRoles',
      scope: /= if \(azureRbac\)[^]*scope: resourceGroup\(aksClusterResourceGroupName\)/,
      module: 'rbac/cluster-roles.bicep',
      target:
        /resource kubeSystem 'namespaces' existing = \{\n\s+name: customRoles\.kubernetesKubeSystemAccess\.namespace[^]*resource kubeSystemAccess [^]*scope: cluster::kubeSystem\n/,
    },
    terraform: {
      name: 'function_kubernetes_kube_system_access',
      scope:
        /count\s+= local\.azure_rbac \? 1 : 0\n\s+scope\s+= "\$\{data\.azurerm_kubernetes_cluster\.target\.id\}\/namespaces\/\$\{local\.custom_roles\.kubernetesKubeSystemAccess\.namespace\}"/,
    },
  },
  aksSystemNamespace: {
    bicep: {
      symbol: 'clusterRoles',
      scope: /= if \(azureRbac\)[^]*scope: resourceGroup\(aksClusterResourceGroupName\)/,
      module: 'rbac/cluster-roles.bicep',
      target:
        /resource systemNamespace 'namespaces' existing = \{\n\s+name: customRoles\.kubernetesSystemNamespaceAccess\.namespace[^]*resource systemNamespaceAccess [^]*scope: cluster::systemNamespace\n/,
    },
    terraform: {
      name: 'function_kubernetes_system_namespace_access',
      scope:
        /count\s+= local\.azure_rbac \? 1 : 0\n\s+scope\s+= "\$\{data\.azurerm_kubernetes_cluster\.target\.id\}\/namespaces\/\$\{local\.custom_roles\.kubernetesSystemNamespaceAccess\.namespace\}"/,
    },
  },
};

describe('custom roles come from infra/azure-roles.json, in both templates', () => {
  const bicep = read('infra/bicep/modules/rbac.bicep');
  const terraform = read('infra/terraform/rbac.tf');

  it('neither template lists an action of its own', () => {
    for (const text of [bicep, terraform])
      expect(text).not.toMatch(/['"]Microsoft\.\w+\/[\w/]*\/(?:read|write|delete|action)['"]/);
  });

  it('every role names a scope of the vocabulary the emulator and both templates share', () => {
    expect(Object.keys(ASSIGNERS).sort()).toEqual([...ASSIGNMENT_SCOPES].sort());
    for (const [key, role] of Object.entries(customRoles))
      expect(ASSIGNMENT_SCOPES, key).toContain(role.assignedAt);
    // No link action is left on a scope wider than the resource it links, but the join of the NICs each
    // VM PUT creates in the node resource group itself (they are the VM's own, and exist only there).
    const wide = Object.values(customRoles)
      .filter((role) => ['nodeResourceGroup', 'subscription'].includes(role.assignedAt))
      .flatMap((role) => role.actions);
    expect(wide.filter((action) => /\/(join|assign|deploy)\/action$/.test(action))).toEqual([
      'Microsoft.Network/networkInterfaces/join/action',
    ]);
  });

  it('each custom role is defined from the table by both, one definition per role', () => {
    expect(bicep).toMatch(
      /for role in items\(customRoles\): if \(azureRbac \|\| !startsWith\(role\.value\.assignedAt, 'aks'\)\)/,
    );
    expect(bicep).toContain('actions: role.value.actions');
    expect(bicep).toContain('dataActions: role.value.?dataActions ?? []');
    expect(terraform).toMatch(
      /for key, role in local\.custom_roles : key => role if local\.azure_rbac \|\| !startswith\(role\.assignedAt, "aks"\)/,
    );
    expect(terraform).toContain('actions          = each.value.actions');
    expect(terraform).toContain('data_actions     = try(each.value.dataActions, [])');
    // A definition's name stays what earlier versions created (role names are unique in a tenant).
    const seeds = /var roleSeeds = \{([^}]*)\}/.exec(bicep)?.[1] ?? '';
    for (const key of Object.keys(customRoles))
      expect(seeds, key).toMatch(new RegExp(`\\b${key}: 'nodeclaim-`));
    for (const [key, seed] of [
      ['vmOperator', 'nodeclaim-vm-operator'],
      ['computeCatalogReader', 'nodeclaim-compute-catalog-reader'],
      ['capacityReservationUser', 'nodeclaim-capacity-reservation-user'],
      ['subnetJoiner', 'nodeclaim-subnet-joiner'],
    ])
      expect(seeds).toContain(`${key}: '${seed}'`);
    for (const key of ['vmOperator', 'computeCatalogReader', 'capacityReservationUser', 'subnetJoiner'])
      expect(terraform).toContain(`to   = azurerm_role_definition.custom["${key}"]`);
  });

  it.each(Object.entries(customRoles))(
    '%s is assigned at the scope the table names, by both (the scope the ARM emulator enforces)',
    (key, role) => {
      const assigner = ASSIGNERS[role.assignedAt];
      // Bicep: the module (or resource) that assigns the role, its scope, and inside it the resource
      // the assignment is scoped to.
      const declaration = bicepDeclaration(bicep, assigner.bicep.symbol);
      expect(declaration).toMatch(assigner.bicep.scope);
      expect(declaration).toMatch(new RegExp(`roleIds\\.${key}\\b`));
      if (assigner.bicep.module) {
        expect(declaration).toContain(`'${assigner.bicep.module}'`);
        expect(read(`infra/bicep/modules/${assigner.bicep.module}`)).toMatch(assigner.bicep.target as RegExp);
      }
      // Terraform: the assignment of this role and its scope.
      const assignments = [...terraform.matchAll(/resource "azurerm_role_assignment" "(\w+)" \{/g)]
        .map((m) => m[1] as string)
        .filter((name) =>
          terraformResource(terraform, 'azurerm_role_assignment', name).includes(
            `azurerm_role_definition.custom["${key}"]`,
          ),
        );
      expect(assignments).toEqual([assigner.terraform.name]);
      expect(terraformResource(terraform, 'azurerm_role_assignment', assigner.terraform.name)).toMatch(
        assigner.terraform.scope,
      );
    },
  );

  it('the resources the link roles are assigned on are the ones the app puts in VM bodies', () => {
    // Bicep: rbac gets them from the cluster inputs the Function App's settings come from.
    const main = read('infra/bicep/main.bicep');
    const rbacModule = bicepDeclaration(main, 'rbac');
    for (const [param, output] of [
      ['kubeletIdentityResourceId', 'kubeletIdentityResourceId'],
      ['loadBalancerBackendPoolIds', 'loadBalancerBackendPoolIds'],
      ['nodeSecurityGroupId', 'nodeSecurityGroupId'],
    ])
      expect(rbacModule).toContain(`${param}: clusterInputs.outputs.settings.${output}`);
    expect(rbacModule).toContain('attachNsgToNic: attachNsgToNic');
    expect(rbacModule).toContain('capacityReservationGroupIds: capacityReservationGroupIds');
    const functionApp = read('infra/bicep/modules/function-app.bicep');
    expect(functionApp).toContain('KUBELET_IDENTITY_RESOURCE_ID: clusterInputs.kubeletIdentityResourceId');
    expect(functionApp).toContain('LOAD_BALANCER_BACKEND_POOL_IDS: clusterInputs.loadBalancerBackendPoolIds');
    expect(functionApp).toContain('NODE_SECURITY_GROUP_ID: clusterInputs.nodeSecurityGroupId');
    expect(functionApp).toContain("CAPACITY_RESERVATION_GROUP_IDS: join(capacityReservationGroupIds, ',')");
    // Terraform: the same locals the app settings read.
    const app = read('infra/terraform/function_app.tf');
    expect(app).toMatch(
      /KUBELET_IDENTITY_RESOURCE_ID\s+= local\.cluster_inputs\.kubelet_identity_resource_id/,
    );
    expect(app).toMatch(
      /LOAD_BALANCER_BACKEND_POOL_IDS\s+= local\.cluster_inputs\.load_balancer_backend_pool_ids/,
    );
    expect(app).toMatch(/NODE_SECURITY_GROUP_ID\s+= local\.cluster_inputs\.node_security_group_id/);
    expect(app).toMatch(
      /CAPACITY_RESERVATION_GROUP_IDS\s+= join\(",", var\.capacity_reservation_group_ids\)/,
    );
    expect(terraform).toMatch(
      /outbound_pool_ids\s+= toset\(compact\(\[for id in split\(",", local\.cluster_inputs\.load_balancer_backend_pool_ids\)/,
    );
    // Read at plan time, so the per-pool assignments can be planned.
    expect(read('infra/terraform/aks_cluster_inputs.tf')).toMatch(
      /^data "azapi_resource_action" "cluster_network_profile"/m,
    );
  });
});

describe('the AKS data roles (kubernetesAuthorization=AzureRBAC) grant what infra/k8s/functions grants', () => {
  const manifests = readdirSync(join(root, 'infra/k8s/functions'))
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) =>
      parseAllDocuments(read(`infra/k8s/functions/${file}`)).map(
        (doc) => doc.toJSON() as { kind: string; metadata: { namespace?: string }; rules?: KubernetesRule[] },
      ),
    );
  const clusterRoles = manifests.filter((object) => object.kind === 'ClusterRole');
  const roles = manifests.filter((object) => object.kind === 'Role');
  const cluster = customRoles.kubernetesClusterAccess as CustomRole;
  const namespacedRoles = [
    customRoles.kubernetesKubeSystemAccess as CustomRole,
    customRoles.kubernetesSystemNamespaceAccess as CustomRole,
  ];

  it("the cluster-wide role holds exactly the ClusterRoles' rules as data actions, and its condition their custom resources", () => {
    expect(clusterRoles.length).toBeGreaterThan(0);
    const derived = aksDataActions(clusterRoles.flatMap((role) => role.rules ?? []));
    expect([...(cluster.dataActions ?? [])].sort()).toEqual(derived.dataActions);
    expect(cluster.customResources).toEqual(derived.customResources);
    expect(cluster.condition).toBe(customResourceCondition(derived.customResources));
    expect(cluster.actions).toEqual([]);
  });

  it("each namespace role holds exactly the Roles' rules of its namespace, one role per namespace", () => {
    expect(new Set(roles.map((role) => role.metadata.namespace))).toEqual(
      new Set(namespacedRoles.map((role) => role.namespace)),
    );
    for (const namespaced of namespacedRoles) {
      const inNamespace = roles.filter((role) => role.metadata.namespace === namespaced.namespace);
      const derived = aksDataActions(inNamespace.flatMap((role) => role.rules ?? []));
      expect(derived.customResources).toEqual([]);
      expect([...(namespaced.dataActions ?? [])].sort(), namespaced.namespace).toEqual(derived.dataActions);
      expect(namespaced.actions).toEqual([]);
    }
    // Never a Secret read, in any namespace: the app reads no Secret.
    expect(namespacedRoles.flatMap((role) => role.dataActions ?? [])).not.toContain(
      'Microsoft.ContainerService/managedClusters/secrets/read',
    );
  });

  it('maps verbs and subresources as AKS authorizes them, and a custom resource only through its condition', () => {
    const mapped = aksDataActions([
      { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['karpenter.sh'], resources: ['nodeclaims/status'], verbs: ['patch'] },
    ]);
    expect(mapped.dataActions).toEqual([
      'Microsoft.ContainerService/managedClusters/apps/deployments/read',
      'Microsoft.ContainerService/managedClusters/customresources/write',
      'Microsoft.ContainerService/managedClusters/pods/write',
    ]);
    expect(mapped.customResources).toEqual([
      { group: 'karpenter.sh', resource: 'nodeclaims', access: ['write'] },
    ]);
    expect(customResourceCondition(mapped.customResources)).toBe(
      "((!(ActionMatches{'Microsoft.ContainerService/managedClusters/customresources/write'})) OR ((@Request[Microsoft.ContainerService/managedClusters/customResources:group] StringEqualsIgnoreCase 'karpenter.sh' AND @Request[Microsoft.ContainerService/managedClusters/customResources:kind] StringEqualsIgnoreCase 'nodeclaims')))",
    );
  });

  it('no longer grants the built-in cluster admin role', () => {
    expect(Object.keys(JSON.parse(read('infra/azure-roles.json')).roles as object)).not.toContain(
      'Azure Kubernetes Service RBAC Cluster Admin',
    );
  });
});
