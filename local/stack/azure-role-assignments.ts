// The Function App identity's Azure role assignments, as Bicep and Terraform deploy them, for the ARM
// emulator to enforce: the custom roles' actions come from infra/azure-roles.json (the table both
// templates read), each assigned at the scope the table names, resolved from the app's own settings
// exactly as the templates resolve it from theirs: the subscription, the node resource group, the node
// subnet, the kubelet identity, each outbound backend pool, the node NSG (only when the NIC carries it),
// each configured Capacity Reservation Group. A scope the settings leave unnamed gets no assignment:
// nothing is ever granted on a wider scope in its place.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTING_ALIASES } from '../../shared/config/settings.js';
import type { AuthorizationSettings, RoleAssignment } from '../arm-emulator/authorization.js';

const ROLE_TABLE = join(import.meta.dirname, '..', '..', 'infra', 'azure-roles.json');

/** The object ID the emulator's 403 messages name, as ARM names the caller's. */
export const LOCAL_FUNCTION_PRINCIPAL_ID = '00000000-0000-0000-0000-00000000f0a1';

/**
 * Where a custom role is assigned (`assignedAt` in infra/azure-roles.json). The two AKS scopes are the
 * Kubernetes data plane's (kubernetesAuthorization=AzureRBAC), which ARM does not serve: locally the
 * control plane enforces the Kubernetes roles of infra/k8s/functions instead.
 */
export const ASSIGNMENT_SCOPES = [
  'subscription',
  'nodeResourceGroup',
  'nodeSubnet',
  'kubeletIdentity',
  'outboundBackendPool',
  'nodeSecurityGroup',
  'capacityReservationGroup',
  'aksCluster',
  'aksNamespace',
  'aksSystemNamespace',
] as const;
export type AssignmentScope = (typeof ASSIGNMENT_SCOPES)[number];

export interface CustomRole {
  roleName: string;
  description: string;
  assignedAt: AssignmentScope;
  actions: string[];
  dataActions?: string[];
  /** aksNamespace, aksSystemNamespace: the namespace the assignment is scoped to. */
  namespace?: string;
}

/** One action taken out of one custom role, for the mutation check and for tests of a missing action. */
export interface AzureRoleMutation {
  role: string;
  action: string;
}

export const AZURE_ROLE_MUTATION_ENV = 'NODECLAIM_AZURE_ROLE_MUTATION';

export function customRoles(): Record<string, CustomRole> {
  return (JSON.parse(readFileSync(ROLE_TABLE, 'utf8')) as { customRoles: Record<string, CustomRole> })
    .customRoles;
}

function mutationFromEnvironment(): AzureRoleMutation | undefined {
  const raw = process.env[AZURE_ROLE_MUTATION_ENV];
  return raw ? (JSON.parse(raw) as AzureRoleMutation) : undefined;
}

/** A setting by the name the app reads, or by one of its documented aliases. */
function setting(appSettings: Readonly<Record<string, string>>, name: string): string {
  const aliases: readonly string[] = (SETTING_ALIASES as Record<string, readonly string[]>)[name] ?? [];
  for (const key of [name, ...aliases]) {
    const value = appSettings[key]?.trim();
    if (value) return value;
  }
  return '';
}

const list = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/**
 * The resource IDs each scope names for a stack with these app settings; empty when the settings name
 * none (no kubelet identity, no outbound pool, an NSG the NIC does not carry, no reservation group).
 */
export function assignmentScopes(
  appSettings: Readonly<Record<string, string>>,
): Record<AssignmentScope, string[]> {
  const subscriptionId = setting(appSettings, 'AZURE_SUBSCRIPTION_ID');
  const nodeGroup = setting(appSettings, 'AZURE_NODE_RESOURCE_GROUP');
  const subscription = subscriptionId ? `/subscriptions/${subscriptionId}` : '';
  const attachNsg = setting(appSettings, 'ATTACH_NSG_TO_NIC') === 'true';
  const one = (id: string): string[] => (id ? [id] : []);
  return {
    subscription: one(subscription),
    nodeResourceGroup: one(subscription && nodeGroup ? `${subscription}/resourceGroups/${nodeGroup}` : ''),
    nodeSubnet: one(setting(appSettings, 'VNET_SUBNET_ID')),
    kubeletIdentity: one(setting(appSettings, 'KUBELET_IDENTITY_RESOURCE_ID')),
    outboundBackendPool: list(setting(appSettings, 'LOAD_BALANCER_BACKEND_POOL_IDS')),
    nodeSecurityGroup: attachNsg ? one(setting(appSettings, 'NODE_SECURITY_GROUP_ID')) : [],
    capacityReservationGroup: list(setting(appSettings, 'CAPACITY_RESERVATION_GROUP_IDS')),
    aksCluster: [],
    aksNamespace: [],
    aksSystemNamespace: [],
  };
}

/**
 * The app identity's assignments for a local stack with these app settings, less `without` when given
 * (or the mutation check's, from the environment): one per role and resource its scope names.
 */
export function appAuthorization(
  appSettings: Readonly<Record<string, string>>,
  without: AzureRoleMutation | undefined = mutationFromEnvironment(),
): AuthorizationSettings {
  const scopes = assignmentScopes(appSettings);
  const assignments: RoleAssignment[] = Object.entries(customRoles()).flatMap(([key, role]) =>
    scopes[role.assignedAt].map((scope) => ({
      roleName: role.roleName,
      actions: role.actions.filter((action) => !(without?.role === key && without.action === action)),
      scope,
    })),
  );
  return { principalId: LOCAL_FUNCTION_PRINCIPAL_ID, assignments };
}
