// Each simulated node talks to the API server as itself: with the client certificate its TLS bootstrap
// got (user system:node:<name>, group system:nodes), so the Node authorizer and the NodeRestriction
// admission plugin judge its registration, heartbeats, status and pod status exactly as they judge a real
// kubelet's (its own Node, its own Lease, only pods bound to it).
//
// Why one agent for all of them: Node's https.Agent keys its pools by the TLS options of each request,
// client certificate included, so every node keeps its own keep-alive connection (as every kubelet has
// its own) while the simulator holds one object to close. At most two connections per node: a Lease
// renewal and a status or pod write may overlap; the heartbeat loop bounds the rest.
import { Agent } from 'node:https';
import { requester, type KubeRequest } from './kube-rest.js';
import type { ApiEndpoint, NodeCertificate } from './tls-bootstrap.js';

export interface NodeConnections {
  /** Requests authenticated with `certificate` (one node's). */
  as(certificate: NodeCertificate): KubeRequest;
  close(): void;
}

export function nodeConnections(endpoint: ApiEndpoint, counts: Record<string, number>): NodeConnections {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  return {
    as: (certificate) =>
      requester({
        base: endpoint.server,
        agent,
        tls: { ca: endpoint.caPem, cert: certificate.certPem, key: certificate.keyPem },
        headers: {},
        counts,
      }),
    close: () => agent.destroy(),
  };
}
