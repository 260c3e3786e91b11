// Tolerations against taints, with kube-scheduler's matching rules (k8s.io/api core/v1 toleration.go).
import type { Taint } from '../../models/kube.js';
import type { Toleration } from './types.js';

export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  // An empty key with Exists tolerates every taint.
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

/**
 * The first taint the pod does not tolerate, or undefined. NoSchedule and NoExecute always repel;
 * PreferNoSchedule repels too, as Karpenter treats it for new NodeClaims until relaxation adds a
 * toleration for it (KS pkg/scheduling/taints.go ToleratesPod).
 */
export function untoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!(tolerations ?? []).some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}

export function describeTaint(taint: Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
