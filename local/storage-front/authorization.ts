// Azure RBAC for Storage data requests, as the Storage service applies it to a Microsoft Entra token:
// a request's permission (operations.ts) is granted when one role assignment of the caller, at the
// request's resource or a scope above it, holds it among its role's `actions` (control actions) or
// `dataActions` (data actions), `*` matching any run of characters. A control action is never granted by
// a data action or the other way round, which is why "Storage Queue Data Message Sender" (one data
// action) cannot read a queue's metadata (a control action).
import type { RequiredPermission } from './operations.js';

export interface StorageRoleAssignment {
  /** For messages and logs. */
  roleName: string;
  actions: readonly string[];
  dataActions: readonly string[];
  /** An ARM ID: the account, or a queue or table in it (…/queueServices/default/queues/<name>). */
  scope: string;
}

/** Whom a token stands for: a name for logs, the object ID Storage names, and the role assignments. */
export interface StoragePrincipal {
  name: string;
  principalId: string;
  assignments: readonly StorageRoleAssignment[];
}

export type StorageDecision =
  { allowed: true; assignment: StorageRoleAssignment } | { allowed: false; missing: readonly string[] };

function pattern(permission: string): RegExp {
  const escaped = permission.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 'i');
}

/** `scope` is `assigned` or lies below it, segment-wise and case-insensitively, as ARM IDs compare. */
function within(scope: string, assigned: string): boolean {
  const a = assigned.replace(/\/+$/, '').toLowerCase();
  const s = scope.replace(/\/+$/, '').toLowerCase();
  return s === a || s.startsWith(`${a}/`);
}

/** The request's resource as an ARM ID under the account's ID. */
export function resourceScope(accountId: string, permission: RequiredPermission): string {
  return `${accountId.replace(/\/+$/, '')}/${permission.resource}`;
}

export function decide(
  principal: StoragePrincipal,
  permission: RequiredPermission,
  accountId: string,
): StorageDecision {
  const scope = resourceScope(accountId, permission);
  const applicable = principal.assignments.filter((assignment) => within(scope, assignment.scope));
  const granted = (candidate: string): StorageRoleAssignment | undefined =>
    applicable.find((assignment) =>
      (permission.kind === 'action' ? assignment.actions : assignment.dataActions).some((held) =>
        pattern(held).test(candidate),
      ),
    );
  let grantedBy: StorageRoleAssignment | undefined;
  const missing: string[] = [];
  for (const alternatives of permission.needs) {
    const found = alternatives.map(granted).find((assignment) => assignment !== undefined);
    if (found) grantedBy ??= found;
    else missing.push(alternatives[0] ?? '');
  }
  return missing.length === 0 && grantedBy
    ? { allowed: true, assignment: grantedBy }
    : { allowed: false, missing };
}
