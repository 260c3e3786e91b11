// The Storage role assignments of the app's two identities, as Bicep and Terraform deploy them, for the
// local storage front to enforce: the built-in Storage roles' permissions and who holds which role at
// which scope come from infra/azure-roles.json (`storageRoles`, the table the templates are held to by
// test/unit/infra-storage-roles.test.ts), each scope resolved to the local account's ARM ID or its events
// queue's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoragePrincipal, StorageRoleAssignment } from '../storage-front/authorization.js';
import { LOCAL_SUBSCRIPTION_ID } from './app-settings.js';

const ROLE_TABLE = join(import.meta.dirname, '..', '..', 'infra', 'azure-roles.json');

export type StorageIdentity = 'functionApp' | 'bridge';
export type StorageAssignmentScope = 'storageAccount' | 'eventsQueue';

export interface StorageRoleDefinition {
  actions: string[];
  dataActions: string[];
}

export interface StorageRoleTable {
  definitions: Record<string, StorageRoleDefinition>;
  assignments: { identity: StorageIdentity; role: string; scope: StorageAssignmentScope }[];
}

/** The object IDs Storage would name; the functions' is the one the ARM emulator names too. */
export const STORAGE_PRINCIPAL_IDS: Record<StorageIdentity, string> = {
  functionApp: '00000000-0000-0000-0000-00000000f0a1',
  bridge: '00000000-0000-0000-0000-00000000b1d9',
};

/** The resource group the local storage account pretends to live in (the app's, not the nodes'). */
export const LOCAL_APP_RESOURCE_GROUP = 'local-nodeclaims';

export function storageRoleTable(): StorageRoleTable {
  return (JSON.parse(readFileSync(ROLE_TABLE, 'utf8')) as { storageRoles: StorageRoleTable }).storageRoles;
}

/** The ARM ID of a local storage account. */
export function localStorageAccountId(accountName: string): string {
  return `/subscriptions/${LOCAL_SUBSCRIPTION_ID}/resourceGroups/${LOCAL_APP_RESOURCE_GROUP}/providers/Microsoft.Storage/storageAccounts/${accountName}`;
}

/** One permission taken out of one role, for tests of a role that lacks it. */
export interface StorageRoleMutation {
  role: string;
  permission: string;
}

/**
 * `identity`'s assignments for an account and events queue, less `without` when given. Throws when the
 * table names a role it does not define, so a typo cannot silently grant nothing.
 */
export function shippedStorageAssignments(
  identity: StorageIdentity,
  where: { accountId: string; eventsQueue: string },
  without?: StorageRoleMutation,
): StorageRoleAssignment[] {
  const table = storageRoleTable();
  const scopes: Record<StorageAssignmentScope, string> = {
    storageAccount: where.accountId,
    eventsQueue: `${where.accountId}/queueServices/default/queues/${where.eventsQueue}`,
  };
  return table.assignments
    .filter((assignment) => assignment.identity === identity)
    .map((assignment) => {
      const definition = table.definitions[assignment.role];
      if (!definition)
        throw new Error(`infra/azure-roles.json assigns ${assignment.role} but does not define it`);
      const keep = (permission: string): boolean =>
        !(without?.role === assignment.role && without.permission === permission);
      return {
        roleName: assignment.role,
        actions: definition.actions.filter(keep),
        dataActions: definition.dataActions.filter(keep),
        scope: scopes[assignment.scope],
      };
    });
}

export function shippedStoragePrincipal(
  identity: StorageIdentity,
  where: { accountId: string; eventsQueue: string },
  without?: StorageRoleMutation,
): StoragePrincipal {
  return {
    name: identity,
    principalId: STORAGE_PRINCIPAL_IDS[identity],
    assignments: shippedStorageAssignments(identity, where, without),
  };
}
