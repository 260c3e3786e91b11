// Host ports a node already has in use, with kube-scheduler's conflict rule (KS pkg/scheduling/hostportusage.go):
// same port and protocol, and the same IP or either side bound to every address (0.0.0.0 or ::).
import type { HostPort } from './pods.js';

const WILDCARDS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '']);

function conflict(a: HostPort, b: HostPort): boolean {
  return (
    a.port === b.port &&
    a.protocol === b.protocol &&
    (a.ip === b.ip || WILDCARDS.has(a.ip) || WILDCARDS.has(b.ip))
  );
}

export function portsConflict(used: readonly HostPort[], wanted: readonly HostPort[]): HostPort | undefined {
  for (const port of wanted) if (used.some((u) => conflict(u, port))) return port;
  return undefined;
}
