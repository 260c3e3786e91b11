// The Storage role assignments the local storage front enforces (infra/azure-roles.json, `storageRoles`)
// are the ones Bicep and Terraform deploy: the same identity, role and scope, read out of the templates.
// A template that widens the bridge's queue-scoped role to the account, or gives the Function App a
// storage role the table does not list, fails here, so the tests keep running with the shipped grants.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storageRoleTable, type StorageRoleTable } from '../../local/stack/storage-role-assignments.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const table: StorageRoleTable = storageRoleTable();
const builtInRoles = (JSON.parse(read('infra/azure-roles.json')) as { roles: Record<string, string> }).roles;

type Assignment = StorageRoleTable['assignments'][number];
const key = (a: Assignment): string => `${a.identity} · ${a.role} · ${a.scope}`;
const storageRole = (role: string): boolean => role.startsWith('Storage ');

/** Bicep: app-resource-roles.bicep's roleAssignments, each with its principal, role and scope. */
function bicepAssignments(): Assignment[] {
  const text = read('infra/bicep/modules/rbac/app-resource-roles.bicep');
  const aliases = new Map(
    [...text.matchAll(/^\s*(\w+): builtInRoles\['([^']+)'\]$/gm)].map((m) => [
      m[1] as string,
      m[2] as string,
    ]),
  );
  const roleOf = (alias: string): string => {
    const role = aliases.get(alias);
    if (!role) throw new Error(`app-resource-roles.bicep: unknown role alias ${alias}`);
    return role;
  };
  const listed = /var functionStorageRoles = \[([^\]]*)\]/.exec(text)?.[1] ?? '';
  const functionRoles = [...listed.matchAll(/roles\.(\w+)/g)].map((m) => roleOf(m[1] as string));
  const scopes: Record<string, Assignment['scope']> = {
    storage: 'storageAccount',
    'storage::queueService::eventsQueue': 'eventsQueue',
  };
  const identities: Record<string, Assignment['identity']> = {
    functionPrincipalId: 'functionApp',
    bridgePrincipalId: 'bridge',
  };
  const assignments: Assignment[] = [];
  const blocks = text.split(/^resource /m).slice(1);
  for (const block of blocks) {
    if (!block.includes("'Microsoft.Authorization/roleAssignments@")) continue;
    const scope = /^\s*scope: (\S+)$/m.exec(block)?.[1] ?? '';
    const principal = /principalId: (\w+)/.exec(block)?.[1] ?? '';
    const identity = identities[principal];
    if (!identity) throw new Error(`app-resource-roles.bicep: unknown principal ${principal}`);
    const roles = /for roleId in functionStorageRoles/.test(block)
      ? functionRoles
      : [roleOf(/'Microsoft\.Authorization\/roleDefinitions',\s*roles\.(\w+)/.exec(block)?.[1] ?? '')];
    for (const role of roles.filter(storageRole)) {
      const resolved = scopes[scope];
      if (!resolved) throw new Error(`app-resource-roles.bicep: ${role} at an unknown scope ${scope}`);
      assignments.push({ identity, role, scope: resolved });
    }
  }
  return assignments;
}

/** Terraform: rbac.tf's azurerm_role_assignment resources, each with its principal, role and scope. */
function terraformAssignments(): Assignment[] {
  const text = read('infra/terraform/rbac.tf');
  const functionRoles = [
    ...(/function_storage_roles = toset\(\[([^\]]*)\]\)/.exec(text)?.[1] ?? '').matchAll(/"([^"]+)"/g),
  ].map((m) => m[1] as string);
  const scopes: Record<string, Assignment['scope']> = {
    'azurerm_storage_account.app.id': 'storageAccount',
    'local.events_queue_id': 'eventsQueue',
  };
  const identities: Record<string, Assignment['identity']> = {
    'azurerm_user_assigned_identity.function.principal_id': 'functionApp',
    'azurerm_user_assigned_identity.bridge.principal_id': 'bridge',
  };
  const assignments: Assignment[] = [];
  for (const m of text.matchAll(/resource "azurerm_role_assignment" "\w+" \{\n([^]*?)\n\}/g)) {
    const body = m[1] ?? '';
    const scope = /^\s*scope\s*=\s*(\S+)$/m.exec(body)?.[1] ?? '';
    const principal = /^\s*principal_id\s*=\s*(\S+)$/m.exec(body)?.[1] ?? '';
    const identity = identities[principal];
    if (!identity) throw new Error(`rbac.tf: unknown principal ${principal}`);
    const roles = /for_each\s*=\s*local\.function_storage_roles/.test(body)
      ? functionRoles
      : [/local\.built_in_roles\["([^"]+)"\]/.exec(body)?.[1] ?? ''];
    for (const role of roles.filter(storageRole)) {
      const resolved = scopes[scope];
      if (!resolved) throw new Error(`rbac.tf: ${role} at an unknown scope ${scope}`);
      assignments.push({ identity, role, scope: resolved });
    }
  }
  return assignments;
}

describe('the storage role table', () => {
  it('defines every role it assigns, each a built-in role with its published ID, and assigns every role it defines', () => {
    const assigned = new Set(table.assignments.map((a) => a.role));
    expect(Object.keys(table.definitions).sort()).toEqual([...assigned].sort());
    for (const role of assigned) expect(builtInRoles[role], role).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("holds Microsoft's published permissions of the one role the bridge gets", () => {
    expect(table.definitions['Storage Queue Data Message Sender']).toEqual({
      actions: [],
      dataActions: ['Microsoft.Storage/storageAccounts/queueServices/queues/messages/add/action'],
    });
  });

  it('gives the bridge one role on the events queue and nothing on the account', () => {
    expect(table.assignments.filter((a) => a.identity === 'bridge')).toEqual([
      { identity: 'bridge', role: 'Storage Queue Data Message Sender', scope: 'eventsQueue' },
    ]);
  });
});

describe.each([
  ['Bicep', bicepAssignments],
  ['Terraform', terraformAssignments],
])('%s', (_tool, assignments) => {
  it('assigns exactly the storage roles of the table, to the same identity at the same scope', () => {
    expect(assignments().map(key).sort()).toEqual(table.assignments.map(key).sort());
  });
});
