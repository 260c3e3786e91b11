// PodDisruptionBudgets as consolidation sees them: a node is not a candidate while one of its pods may
// not be evicted now (its PDB allows no disruption) or is covered by more than one PDB (the Eviction API
// refuses those outright). Upstream's pdb.Limits, over plain data.
import { compileSelector, type LabelPredicate } from '../scheduling/selectors.js';
import type { LabelSelector } from '../scheduling/types.js';
import type { ConsolidationPod } from './pods.js';
import { isEvictable } from './pods.js';

export interface PdbLimit {
  namespace: string;
  name: string;
  /** Undefined (null in the API) selects nothing; an empty selector selects every pod of the namespace. */
  selector?: LabelSelector;
  /** status.disruptionsAllowed. */
  disruptionsAllowed: number;
  /** spec.unhealthyPodEvictionPolicy: AlwaysAllow lets a not-Ready pod go whatever the budget. */
  unhealthyPodEvictionPolicy?: string;
}

// One compiled predicate per selector object: a sweep matches every pod against its namespace's PDBs.
const compiledSelectors = new WeakMap<LabelSelector, LabelPredicate>();

function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  let predicate = compiledSelectors.get(selector);
  if (!predicate) {
    predicate = compileSelector(selector);
    compiledSelectors.set(selector, predicate);
  }
  return predicate(labels);
}

const pdbKey = (pdb: Pick<PdbLimit, 'namespace' | 'name'>): string => `${pdb.namespace}/${pdb.name}`;

/** PDBs by namespace, so each pod is matched against its own namespace's budgets only. */
export function indexPdbs(pdbs: readonly PdbLimit[]): Map<string, PdbLimit[]> {
  const byNamespace = new Map<string, PdbLimit[]>();
  for (const pdb of pdbs) {
    const list = byNamespace.get(pdb.namespace);
    if (list) list.push(pdb);
    else byNamespace.set(pdb.namespace, [pdb]);
  }
  return byNamespace;
}

function pdbsCovering(pod: ConsolidationPod, byNamespace: ReadonlyMap<string, PdbLimit[]>): PdbLimit[] {
  return (byNamespace.get(pod.namespace) ?? []).filter(
    (pdb) => pdb.selector !== undefined && selectorMatches(pdb.selector, pod.labels),
  );
}

/** Why the PDBs stop these pods from being evicted now, or undefined when all may go. */
export function pdbBlock(
  pods: readonly ConsolidationPod[],
  byNamespace: ReadonlyMap<string, PdbLimit[]>,
  now: Date,
): string | undefined {
  for (const pod of pods) {
    if (!isEvictable(pod, now)) continue;
    const covering = pdbsCovering(pod, byNamespace);
    if (covering.length > 1) {
      return `eviction does not support multiple PDBs (PodDisruptionBudget(s)=[${covering.map(pdbKey).join(' ')}], Pod=${pod.namespace}/${pod.name})`;
    }
    const pdb = covering[0];
    if (!pdb || pdb.disruptionsAllowed > 0) continue;
    if (!pod.ready && pdb.unhealthyPodEvictionPolicy === 'AlwaysAllow') continue;
    return `pdb prevents pod evictions (PodDisruptionBudget=${pdbKey(pdb)}, Pod=${pod.namespace}/${pod.name})`;
  }
  return undefined;
}
