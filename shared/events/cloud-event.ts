// The event bridge's message format: a CloudEvents 1.0 JSON envelope that names *which* object
// changed. It never carries the object itself; handlers read current state (level-triggered).

export const CLOUD_EVENT_SPEC_VERSION = '1.0';
export const EVENT_TYPE_PREFIX = 'com.nodeclaim-azure.kubernetes';

export type WatchedKind = 'NodeClaim' | 'Node' | 'NodePool' | 'AKSNodeClass' | 'Pod';
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

export interface ObjectChange {
  kind: WatchedKind;
  /** Set for namespaced kinds (Pod). */
  namespace?: string;
  name: string;
  uid: string;
  resourceVersion: string;
  changeType: ChangeType;
  /**
   * A NodeClaim's karpenter.sh/nodepool label. It lets a handler act on the NodePool once the NodeClaim
   * is gone (a freed disruption budget slot), when there is nothing left to read the label from.
   */
  nodePool?: string;
}

export interface ObjectChangeEvent {
  specversion: '1.0';
  id: string;
  source: string;
  /** `${EVENT_TYPE_PREFIX}.${kind}.${changeType}` lower-cased kind, e.g. `...nodeclaim.added`. */
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: ObjectChange;
}

const kinds: readonly WatchedKind[] = ['NodeClaim', 'Node', 'NodePool', 'AKSNodeClass', 'Pod'];
const changeTypes: readonly ChangeType[] = ['ADDED', 'MODIFIED', 'DELETED', 'RESYNC'];

export function toCloudEvent(
  change: ObjectChange,
  options: { id: string; source: string; time: Date },
): ObjectChangeEvent {
  return {
    specversion: CLOUD_EVENT_SPEC_VERSION,
    id: options.id,
    source: options.source,
    type: `${EVENT_TYPE_PREFIX}.${change.kind.toLowerCase()}.${change.changeType.toLowerCase()}`,
    subject:
      change.namespace === undefined
        ? `${change.kind}/${change.name}`
        : `${change.kind}/${change.namespace}/${change.name}`,
    time: options.time.toISOString(),
    datacontenttype: 'application/json',
    data: change,
  };
}

export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
}

/**
 * Parses a queue message body (string, Buffer or already-decoded JSON) into an event, or throws
 * MalformedEventError saying exactly which field is wrong, so the message can be poisoned with a reason.
 */
export function parseObjectChangeEvent(body: unknown): ObjectChangeEvent {
  let value: unknown = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new MalformedEventError(`message is not JSON: ${(error as Error).message}`);
    }
  }
  if (!isRecord(value)) throw new MalformedEventError('message is not a JSON object');
  if (value.specversion !== CLOUD_EVENT_SPEC_VERSION) {
    throw new MalformedEventError(`specversion must be "1.0", got ${JSON.stringify(value.specversion)}`);
  }
  for (const field of ['id', 'source', 'type', 'time'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '') {
      throw new MalformedEventError(`field "${field}" must be a non-empty string`);
    }
  }
  const data = value.data;
  if (!isRecord(data)) throw new MalformedEventError('field "data" must be an object');
  if (!kinds.includes(data.kind as WatchedKind)) {
    throw new MalformedEventError(
      `data.kind must be one of ${kinds.join(', ')}, got ${JSON.stringify(data.kind)}`,
    );
  }
  if (!changeTypes.includes(data.changeType as ChangeType)) {
    throw new MalformedEventError(
      `data.changeType must be one of ${changeTypes.join(', ')}, got ${JSON.stringify(data.changeType)}`,
    );
  }
  for (const field of ['name', 'uid', 'resourceVersion'] as const) {
    if (typeof data[field] !== 'string' || data[field] === '') {
      throw new MalformedEventError(`data.${field} must be a non-empty string`);
    }
  }
  if (data.nodePool !== undefined && (typeof data.nodePool !== 'string' || data.nodePool === '')) {
    throw new MalformedEventError('data.nodePool must be a non-empty string when present');
  }
  if (data.kind === 'Pod' && (typeof data.namespace !== 'string' || data.namespace === '')) {
    throw new MalformedEventError('data.namespace must be a non-empty string for a Pod');
  }
  return value as unknown as ObjectChangeEvent;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The event bridge's readiness probe. With only "Storage Queue Data Message Sender" the bridge can send
 * and do nothing else (not even read the queue's metadata), so the one proof that it can publish is a
 * message it published: the probe. It names no object; the queue trigger drops it (isBridgeProbeEvent).
 */
export const BRIDGE_PROBE_EVENT_TYPE = 'com.nodeclaim-azure.bridge.probe';

export interface BridgeProbeEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: typeof BRIDGE_PROBE_EVENT_TYPE;
  time: string;
}

export function toBridgeProbeEvent(options: { id: string; source: string; time: Date }): BridgeProbeEvent {
  return {
    specversion: CLOUD_EVENT_SPEC_VERSION,
    id: options.id,
    source: options.source,
    type: BRIDGE_PROBE_EVENT_TYPE,
    time: options.time.toISOString(),
  };
}

/** The bridge probe a message body (string, Buffer or decoded JSON) holds, or undefined for anything else. */
export function bridgeProbeOf(body: unknown): BridgeProbeEvent | undefined {
  let value: unknown = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return isRecord(value) &&
    value.specversion === CLOUD_EVENT_SPEC_VERSION &&
    value.type === BRIDGE_PROBE_EVENT_TYPE &&
    typeof value.id === 'string'
    ? (value as unknown as BridgeProbeEvent)
    : undefined;
}

/** True for a bridge probe; anything else goes to parseObjectChangeEvent. */
export function isBridgeProbeEvent(body: unknown): boolean {
  return bridgeProbeOf(body) !== undefined;
}
