// Content hashes that launch stamps on every NodeClaim, so drift detection can later tell whether the
// NodePool template or the AKSNodeClass changed in a way that needs a new node. Each hash is versioned:
// changing what goes into a hash means bumping its version, and a NodeClaim stamped with another
// version is never considered drifted (it is restamped instead), so an upgrade cannot drift the fleet.
import { createHash } from 'node:crypto';
import type { AKSNodeClass } from '../models/aks-node-class.js';
import type { NodePool } from '../models/karpenter.js';
import type { Taint } from '../models/kube.js';
import { WellKnown } from '../models/karpenter.js';

export const NODEPOOL_HASH_VERSION = 'v1';
export const NODECLASS_HASH_VERSION = 'v1';

/** 64 bits of SHA-256, hex: collisions are irrelevant at fleet sizes, and the annotation stays short. */
const HASH_HEX_LENGTH = 16;

type Canonical = string | number | boolean | null | Canonical[] | { [key: string]: Canonical };

/** JSON with object keys sorted, so the same content always yields the same text. */
function canonicalJson(value: Canonical): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] ?? null)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function digest(value: Canonical): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, HASH_HEX_LENGTH);
}

/** Drops undefined fields; empty maps and lists count as absent, as they do once the API server stores them. */
function compact(fields: Record<string, Canonical | undefined>): { [key: string]: Canonical } {
  const out: { [key: string]: Canonical } = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      Object.keys(value).length === 0
    ) {
      continue;
    }
    out[key] = value;
  }
  return out;
}

function stringMap(
  map: Readonly<Record<string, string>> | undefined,
): { [key: string]: Canonical } | undefined {
  return map ? { ...map } : undefined;
}

// Code-unit order, not locale order: the hash must not depend on the machine computing it.
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Taints form a set: order is irrelevant, a missing value equals "", and timeAdded is bookkeeping.
function taintSet(taints: readonly Taint[] | undefined): Canonical[] | undefined {
  if (!taints) return undefined;
  return taints
    .map((t) => ({ key: t.key, value: t.value ?? '', effect: t.effect }))
    .sort(
      (a, b) => compareText(a.key, b.key) || compareText(a.effect, b.effect) || compareText(a.value, b.value),
    );
}

/**
 * Hash of the parts of `spec.template` that a running node embodies. Requirements are left out
 * (they are checked against the NodeClaim's labels instead, so widening them drifts nothing), as is
 * everything outside the template (disruption, budgets, limits, weight, replicas).
 */
export function nodePoolTemplateHash(nodePool: NodePool): string {
  const template = nodePool.spec.template;
  const ref = template.spec.nodeClassRef;
  return digest(
    compact({
      labels: stringMap(template.metadata?.labels),
      annotations: stringMap(template.metadata?.annotations),
      taints: taintSet(template.spec.taints),
      startupTaints: taintSet(template.spec.startupTaints),
      nodeClassRef: { group: ref.group, kind: ref.kind, name: ref.name },
      expireAfter: template.spec.expireAfter,
      terminationGracePeriod: template.spec.terminationGracePeriod,
    }),
  );
}

/**
 * Hash of the AKSNodeClass fields baked into a VM at creation: image, OS disk, subnet, kubelet
 * configuration and max pods. Tags are deliberately excluded: Azure can retag a running VM in place,
 * so a tag change must not replace nodes.
 */
export function nodeClassHash(nodeClass: AKSNodeClass): string {
  const spec = nodeClass.spec;
  const kubelet = spec.kubelet;
  return digest(
    compact({
      imageFamily: spec.imageFamily,
      imageVersion: spec.imageVersion,
      osDiskSizeGB: spec.osDiskSizeGB,
      vnetSubnetID: spec.vnetSubnetID,
      kubelet: kubelet
        ? compact({
            ...kubelet,
            // A set of sysctl patterns: order carries no meaning.
            allowedUnsafeSysctls: kubelet.allowedUnsafeSysctls
              ? [...kubelet.allowedUnsafeSysctls].sort(compareText)
              : undefined,
          })
        : undefined,
      maxPods: spec.maxPods,
    }),
  );
}

/** The annotations launch stamps on a NodeClaim it creates from this NodePool and AKSNodeClass. */
export function hashAnnotations(nodePool: NodePool, nodeClass: AKSNodeClass): Record<string, string> {
  return {
    [WellKnown.nodePoolHashAnnotation]: nodePoolTemplateHash(nodePool),
    [WellKnown.nodePoolHashVersionAnnotation]: NODEPOOL_HASH_VERSION,
    [WellKnown.nodeClassHashAnnotation]: nodeClassHash(nodeClass),
    [WellKnown.nodeClassHashVersionAnnotation]: NODECLASS_HASH_VERSION,
  };
}
