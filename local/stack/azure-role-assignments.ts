// The Function App identity's Azure role assignments, as Bicep and Terraform deploy them, for the ARM
// emulator to enforce: the custom roles' actions come from infra/azure-roles.json (the table both
// templates read), each assigned at the scope the table names, resolved from the app's own settings
// (subscription, node resource group, node subnet).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthorizationSettings, RoleAssignment } from '../arm-emulator/authorization.js';

const ROLE_TABLE = join(import.meta.dirname, '..', '..', 'infra', 'azure-roles.json');

/** The object ID the emulator's 403 messages name, as ARM names the caller's. */
export const LOCAL_FUNCTION_PRINCIPAL_ID = '00000000-0000-0000-0000-00000000f0a1';

export type AssignmentScope = 'nodeResourceGroup' | 'subscription' | 'nodeSubnet';

export interface CustomRole {
  roleName: string;
  description: string;
  assignedAt: AssignmentScope;
  actions: string[];
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

/**
 * The app identity's assignments for a local stack with these app settings (AZURE_SUBSCRIPTION_ID,
 * AZURE_RESOURCE_GROUP, AZURE_SUBNET_ID), less `without` when given (or the mutation check's, from the
 * environment).
 */
export function appAuthorization(
  appSettings: Readonly<Record<string, string>>,
  without: AzureRoleMutation | undefined = mutationFromEnvironment(),
): AuthorizationSettings {
  const subscription = `/subscriptions/${appSettings['AZURE_SUBSCRIPTION_ID'] ?? ''}`;
  const scopes: Record<AssignmentScope, string> = {
    subscription,
    nodeResourceGroup: `${subscription}/resourceGroups/${appSettings['AZURE_RESOURCE_GROUP'] ?? ''}`,
    nodeSubnet: appSettings['AZURE_SUBNET_ID'] ?? '',
  };
  const assignments: RoleAssignment[] = Object.entries(customRoles()).map(([key, role]) => ({
    roleName: role.roleName,
    actions: role.actions.filter((action) => !(without?.role === key && without.action === action)),
    scope: scopes[role.assignedAt],
  }));
  return { principalId: LOCAL_FUNCTION_PRINCIPAL_ID, assignments };
}
