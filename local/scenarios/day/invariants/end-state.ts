// At the end of the day, once it settled: no VM without its NodeClaim (leaked), no Node without its
// NodeClaim (orphan), no NodeClaim stuck (not Initialized, or deleting, for longer than `stuckMs` plus
// any outage or dead host meanwhile); and
// after the scenario deleted its NodePools and workloads, nothing of the run left at all. Pure.
import { isConditionTrue } from '../../../../shared/decisions/conditions.js';
import { vmNameFor } from '../../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { ConditionTypes } from '../../../../shared/models/index.js';
import { disturbedDuring, result, type DayHistory, type InvariantResult } from './history.js';

export function checkEndState(history: DayHistory, stuckMs: number): InvariantResult {
  const end = history.end;
  if (!end)
    return result(
      'at the end: 0 leaked VMs, 0 orphan Nodes, 0 NodeClaims stuck',
      ['the day did not reach its end'],
      '',
    );
  const vmNames = new Set(end.nodeClaims.map((c) => vmNameFor(c.metadata.name)));
  const leaked = end.vms.filter((vm) => !vmNames.has(vm.name));
  const claimedNodes = new Set(
    end.nodeClaims.map((c) => c.status?.nodeName).filter((n): n is string => Boolean(n)),
  );
  const providerIds = new Set(end.nodeClaims.map((c) => c.status?.providerID?.toLowerCase()).filter(Boolean));
  const orphans = end.nodes.filter(
    (n) => !claimedNodes.has(n.metadata.name) && !providerIds.has(n.spec.providerID?.toLowerCase()),
  );
  // As the pending bound, the stuck bound grows by the time the cluster could not act meanwhile: a
  // drain or a launch cannot progress while the API server is down or the host is dead.
  const stuckSince = (since: number) => end.at - since > stuckMs + disturbedDuring(history, since, end.at);
  const stuck = end.nodeClaims.filter((c) => {
    const deleting = c.metadata.deletionTimestamp ? Date.parse(c.metadata.deletionTimestamp) : undefined;
    if (deleting !== undefined) return stuckSince(deleting);
    const since = end.firstSeen[c.metadata.name] ?? end.at;
    return !isConditionTrue(c.status?.conditions, ConditionTypes.initialized) && stuckSince(since);
  });
  const teardown = history.teardown;
  const left = teardown ? teardown.vms + teardown.nodes + teardown.nodeClaims : undefined;
  const violations = [
    ...leaked.map((vm) => `VM ${vm.name} (${vm.provisioningState}) has no NodeClaim`),
    ...orphans.map((n) => `Node ${n.metadata.name} has no NodeClaim`),
    ...stuck.map((c) =>
      c.metadata.deletionTimestamp
        ? `NodeClaim ${c.metadata.name} deleting since ${c.metadata.deletionTimestamp}`
        : `NodeClaim ${c.metadata.name} not Initialized after ${((end.at - (end.firstSeen[c.metadata.name] ?? end.at)) / 1000).toFixed(0)} s`,
    ),
    ...(left === undefined ? ['the teardown did not finish'] : []),
    ...(teardown && left !== 0
      ? [
          `after the teardown: ${teardown.vms} VMs, ${teardown.nodes} Nodes, ${teardown.nodeClaims} NodeClaims left`,
        ]
      : []),
  ];
  return result(
    'at the end: 0 leaked VMs, 0 orphan Nodes, 0 NodeClaims stuck; nothing left after the teardown',
    violations,
    `${end.vms.length} VMs, ${end.nodes.length} Nodes, ${end.nodeClaims.length} NodeClaims at the end: ` +
      `${leaked.length} leaked, ${orphans.length} orphan, ${stuck.length} stuck; ` +
      (teardown ? `after the teardown ${left ?? '?'} objects left` : 'no teardown'),
  );
}
