// One successful VM PUT per NodeClaim: in the ARM emulator's request log, no VM name (one per NodeClaim)
// has two PUTs that created it without a DELETE of it in between (a relaunch after a transient failure
// deletes the VM first). Pure.
import { result, type DayHistory, type InvariantResult } from './history.js';

export function checkVmPuts(history: DayHistory): InvariantResult {
  const live = new Map<string, boolean>();
  const created = new Set<string>();
  let puts = 0;
  let relaunches = 0;
  const violations: string[] = [];
  for (const request of history.armRequests) {
    if (request.kind !== 'putVm' && request.kind !== 'deleteVm') continue;
    const name = request.vmName;
    if (!name || request.status < 200 || request.status >= 300) continue;
    if (request.method === 'DELETE') {
      live.set(name, false);
      continue;
    }
    if (request.method !== 'PUT') continue;
    puts += 1;
    if (live.get(name))
      violations.push(`VM ${name} created by a second successful PUT while the first stood`);
    if (created.has(name)) relaunches += 1;
    created.add(name);
    live.set(name, true);
  }
  return result(
    'one successful VM PUT per NodeClaim (ARM request log)',
    violations,
    `${puts} successful PUTs for ${created.size} VM names (${relaunches} relaunched after their VM was deleted)`,
  );
}
