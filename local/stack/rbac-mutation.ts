// One permission taken out of the shipped Kubernetes roles, for the mutation check: the stack applies the
// manifests with this verb removed from this role's rules (on every resource of a rule that names it), and
// the tests then show whether anything needs it. Plain data in, plain data out.
import type { KubernetesObject } from '@kubernetes/client-node';

export interface RbacMutation {
  /** Role or ClusterRole. */
  kind: string;
  /** The role's name in the manifest. */
  name: string;
  apiGroup: string;
  /** As the rule names it, subresource included (`nodeclaims/status`). */
  resource: string;
  verb: string;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

export function permissionKey(mutation: RbacMutation): string {
  return `${mutation.kind}/${mutation.name}: ${mutation.verb} ${mutation.apiGroup || 'core'}/${mutation.resource}`;
}

/** Every (role, group, resource, verb) the manifests grant: the mutations the check runs. */
export function rbacPermissions(objects: readonly (KubernetesObject & { rules?: Rule[] })[]): RbacMutation[] {
  const seen = new Map<string, RbacMutation>();
  for (const object of objects) {
    if (object.kind !== 'Role' && object.kind !== 'ClusterRole') continue;
    for (const rule of object.rules ?? [])
      for (const apiGroup of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) {
            const mutation = {
              kind: object.kind,
              name: object.metadata?.name ?? '',
              apiGroup,
              resource,
              verb,
            };
            seen.set(permissionKey(mutation), mutation);
          }
  }
  return [...seen.values()];
}

/**
 * The objects with the mutation applied: the matching rule is split so that only `verb` on `resource`
 * goes, and the rule's other resources and verbs stay granted.
 */
export function applyRbacMutation<T extends KubernetesObject & { rules?: Rule[] }>(
  objects: readonly T[],
  mutation: RbacMutation,
): T[] {
  return objects.map((object) => {
    if (object.kind !== mutation.kind || object.metadata?.name !== mutation.name || !object.rules)
      return object;
    const rules = object.rules.flatMap((rule): Rule[] => {
      const matches =
        (rule.apiGroups ?? []).includes(mutation.apiGroup) &&
        (rule.resources ?? []).includes(mutation.resource) &&
        rule.verbs.includes(mutation.verb);
      if (!matches) return [rule];
      const others = (rule.resources ?? []).filter((r) => r !== mutation.resource);
      const verbs = rule.verbs.filter((v) => v !== mutation.verb);
      return [
        ...(others.length > 0 ? [{ ...rule, resources: others }] : []),
        ...(verbs.length > 0 ? [{ ...rule, resources: [mutation.resource], verbs }] : []),
      ];
    });
    return { ...object, rules };
  });
}
