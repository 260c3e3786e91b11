// The launch monitor's orchestration instance IDs, apart from the monitor itself: termination and the
// sweep's launch leftovers stop or purge every monitor a NodeClaim can have had, knowing only its UID,
// and must not need the launch folder (which needs termination) to do it.
import { MAX_LAUNCH_RETRIES } from '../../decisions/launch-retry.js';

/** The first launch's monitor keeps the plain ID; each relaunch after a transient failure has its own. */
export const launchMonitorInstanceId = (nodeClaimUid: string, retries = 0): string =>
  retries === 0 ? `launch-${nodeClaimUid}` : `launch-${nodeClaimUid}-retry-${retries}`;

/** Every monitor a NodeClaim can have had, for those who stop or purge them without reading it. */
export const launchMonitorInstanceIds = (nodeClaimUid: string): string[] =>
  Array.from({ length: MAX_LAUNCH_RETRIES + 1 }, (_, retries) =>
    launchMonitorInstanceId(nodeClaimUid, retries),
  );
