// Event aggregation against the real kube-apiserver the global setup starts: repeats of one reason and
// message on one NodeClaim are one Event whose count says how often; another recorder (another instance of
// the app, or this one restarted) counts on the same Event; new Events per object are rate limited, while
// repeats of an existing series still count. Nothing mocked: the recorders write as the Function App's
// shipped identity (its ClusterRole's create, get and update on Events); admin only creates the NodeClaims
// and reads the Events back.
import { randomUUID } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type CoreV1Event } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EVENT_BURST_PER_OBJECT } from '../../shared/decisions/event-series.js';
import type { KubeClients } from '../../shared/kube/client.js';
import { NodeClaimResource } from '../../shared/kube/crd-names.js';
import { kubeEventRecorder, type EventTarget } from '../../shared/kube/events.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { exampleRequirements, nodeClassRef } from '../support/fixtures.js';

let clients: KubeClients;
let appClients: KubeClients;
const created: string[] = [];

function clientsOf(kubeconfigPath: string): KubeClients {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  return { core: config.makeApiClient(CoreV1Api), custom: config.makeApiClient(CustomObjectsApi), config };
}

beforeAll(() => {
  clients = clientsOf(inject('kubeconfigPath'));
  appClients = clientsOf(inject('functionsKubeconfigPath'));
});

afterAll(async () => {
  for (const name of created) {
    await clients.custom.deleteClusterCustomObject({ ...NodeClaimResource, name }).catch(() => undefined);
  }
});

async function nodeClaimTarget(prefix: string): Promise<EventTarget> {
  const name = `${prefix}-${randomUUID().slice(0, 8)}`;
  const body = {
    apiVersion: `${NodeClaimResource.group}/${NodeClaimResource.version}`,
    kind: 'NodeClaim',
    metadata: { name },
    spec: { nodeClassRef: nodeClassRef('default'), requirements: exampleRequirements },
  };
  const claim = (await clients.custom.createClusterCustomObject({ ...NodeClaimResource, body })) as {
    metadata: { uid: string };
  };
  created.push(name);
  return { apiVersion: body.apiVersion, kind: 'NodeClaim', name, uid: claim.metadata.uid };
}

async function eventsOn(target: EventTarget): Promise<CoreV1Event[]> {
  const list = await clients.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${target.name},involvedObject.kind=NodeClaim`,
  });
  return list.items;
}

describe('event aggregation', () => {
  it('records one reason repeated 50 times on one NodeClaim as one Event with count 50', async () => {
    const target = await nodeClaimTarget('events-repeat');
    const recorder = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger);
    for (let i = 0; i < 25; i++) await recorder.warning(target, 'LaunchFailed', 'the same message');
    // Repeats that arrive together are serialized per series instead of conflicting.
    await Promise.all(
      Array.from({ length: 25 }, () => recorder.warning(target, 'LaunchFailed', 'the same message')),
    );

    const events = await eventsOn(target);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event?.count).toBe(50);
    expect(event?.reason).toBe('LaunchFailed');
    expect(event?.type).toBe('Warning');
    expect(event?.involvedObject.uid).toBe(target.uid);
    expect(new Date(event?.lastTimestamp ?? 0).getTime()).toBeGreaterThanOrEqual(
      new Date(event?.firstTimestamp ?? Infinity).getTime(),
    );

    // Another instance of the app knows nothing of the series, and counts on the same Event.
    const another = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger);
    await another.warning(target, 'LaunchFailed', 'the same message');
    const after = await eventsOn(target);
    expect(after.map((e) => e.count)).toEqual([51]);
  });

  it('keeps distinct reasons and messages apart', async () => {
    const target = await nodeClaimTarget('events-distinct');
    const recorder = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger);
    await recorder.normal(target, 'Launched', 'one');
    await recorder.normal(target, 'Launched', 'one');
    await recorder.normal(target, 'Launched', 'two');
    await recorder.warning(target, 'Launched', 'one');
    const counts = (await eventsOn(target))
      .map((e) => `${e.type}/${e.reason}/${e.message}=${e.count}`)
      .sort();
    expect(counts).toEqual(['Normal/Launched/one=2', 'Normal/Launched/two=1', 'Warning/Launched/one=1']);
  });

  it('rate limits new Events per object, and still counts repeats of a series once the burst is spent', async () => {
    const target = await nodeClaimTarget('events-limit');
    const recorder = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger);
    for (let i = 0; i < EVENT_BURST_PER_OBJECT + 5; i++)
      await recorder.normal(target, 'Step', `message ${i}`);
    expect(await eventsOn(target)).toHaveLength(EVENT_BURST_PER_OBJECT);
    await recorder.normal(target, 'Step', 'message 0');
    const first = (await eventsOn(target)).find((e) => e.message === 'message 0');
    expect(first?.count).toBe(2);
  });

  it('bounds a reason across objects: occurrences over its rate are dropped before any request, the rest recorded', async () => {
    const targets = await Promise.all([1, 2, 3, 4, 5].map(() => nodeClaimTarget('events-reason')));
    let clock = new Date('2026-01-01T00:00:00Z');
    const recorder = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger, {
      reasonLimits: { Nominated: { burst: 3, refillIntervalMs: 60_000 } },
      now: () => clock,
    });
    for (const target of targets)
      await recorder.normal(target, 'Nominated', 'Pod should schedule on: node/a');
    // Another reason is not bound by Nominated's rate.
    await recorder.normal(targets[4]!, 'Launched', 'launched');
    const counts = await Promise.all(targets.map(async (t) => (await eventsOn(t)).map((e) => e.reason)));
    expect(counts).toEqual([['Nominated'], ['Nominated'], ['Nominated'], [], ['Launched']]);
    // A token comes back after the refill interval.
    clock = new Date('2026-01-01T00:01:00Z');
    await recorder.normal(targets[3]!, 'Nominated', 'Pod should schedule on: node/a');
    expect((await eventsOn(targets[3]!)).map((e) => e.reason)).toEqual(['Nominated']);
  });

  it('starts the series over on the same Event when a repeat comes after the window', async () => {
    const target = await nodeClaimTarget('events-window');
    let clock = new Date('2026-01-01T00:00:00Z');
    const recorder = kubeEventRecorder(async () => appClients, 'nodeclaim-azure-functions', silentLogger, {
      windowMs: 60_000,
      now: () => clock,
    });
    await recorder.normal(target, 'Consolidatable', 'empty');
    clock = new Date('2026-01-01T00:00:30Z');
    await recorder.normal(target, 'Consolidatable', 'empty');
    clock = new Date('2026-01-01T00:05:00Z');
    await recorder.normal(target, 'Consolidatable', 'empty');
    const events = await eventsOn(target);
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(1);
    expect(new Date(events[0]?.firstTimestamp ?? 0).toISOString()).toBe('2026-01-01T00:05:00.000Z');
  });
});
