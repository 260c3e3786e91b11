// The spot preemption fast path end to end, at speed 1 (Azure's 30 s notice): a static NodePool of one
// spot node runs a Deployment's pod; the ARM emulator preempts the VM (the notice, then the eviction 30 s
// later, evictionPolicy Delete). The kubelet simulator's node agent posts PreemptionScheduled=True, the
// bridge forwards the Node and the event handler starts the repair workflow, which remembers the spot
// offering as unavailable, launches a replacement at once (so on another offering) and drains the node
// once the replacement is Initialized: the pod is Running on the replacement before the VM is evicted.
// The sweep runs only every 30 s here and the notice comes 8 s after one; the test watches the host's
// invocations and holds that no sweep began between the notice and the replacement, so the replacement
// can only have come from the event, not from the sweep's repair (a causal check, not a time bound that a
// loaded machine can miss).
// Real control plane, Azurite, ARM emulator, Function App in the in-process host, event bridge and
// kubelet simulator; nothing mocked.
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { exampleNodeClass, exampleNodePool, kubeApis } from '../../local/scenarios/scenario.js';
import { functionAppOf, startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { TriggerNames } from '../../shared/runtime/function-names.js';
import { parseProviderId } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { WellKnown, type NodeClaim } from '../../shared/models/karpenter.js';
import { createLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import { shippedIdentities } from '../support/identities.js';
import { pollUntilDefined } from '../support/poll.js';

let stack: LocalStack;
/** The sweep's NCRONTAB here: at :00 and :30 of every minute (wall clock). */
const SWEEP_PERIOD_SECONDS = 30;
/** How far into a sweep period the notice comes: the sweep before it is done, the next 22 s away. */
const NOTICE_OFFSET_SECONDS = 8;
const log = createLogger({
  component: 'e2e',
  minLevel: process.env.TEST_LOGS ? 'debug' : 'warn',
  sink: (_level, line) => process.stderr.write(line + '\n'),
});

beforeAll(async () => {
  stack = await startLocalStack({
    speed: 1,
    scoped: true,
    sweepSchedule: `*/${SWEEP_PERIOD_SECONDS} * * * * *`,
    shared: {
      kubeconfigPath: inject('kubeconfigPath'),
      identities: shippedIdentities(),
      storageConnectionString: inject('azuriteConnectionString'),
      ca: await devCa(),
    },
    log,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const initialized = (c: NodeClaim) =>
  c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ?? false;

test('a preempted spot node’s pod is Running on the replacement before Azure evicts the VM', async () => {
  const { runId } = stack;
  const name = `spot-${runId}`;
  const objects = stack.admin.objects;
  const pool = exampleNodePool(name, runId, name);
  pool.spec.replicas = 1;
  pool.spec.template.spec.requirements = pool.spec.template.spec.requirements.map((r) =>
    r.key === WellKnown.capacityTypeLabel ? { ...r, values: ['spot'] } : r,
  );
  await objects.nodeClasses.create(exampleNodeClass(name, runId));
  await objects.nodePools.create(pool);
  const ofPool = async () => objects.nodeClaims.list({ labelSelector: `${WellKnown.nodePoolLabel}=${name}` });

  const original = await pollUntilDefined(
    'the spot node initialized',
    async () => (await ofPool()).find(initialized),
    120_000,
  );
  const { apps, core } = kubeApis(stack.kubeconfigPath);
  const labels = { app: name };
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            nodeSelector: { [WellKnown.nodePoolLabel]: name },
            containers: [
              { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } },
            ],
          },
        },
      },
    },
  });
  const runningOn = async (): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items.filter(
      (p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp,
    );
  const oldNode = original.status?.nodeName ?? '';
  await pollUntilDefined('the pod Running on the spot node', async () =>
    (await runningOn()).some((p) => p.spec?.nodeName === oldNode) ? true : undefined,
  );

  const vmName = parseProviderId(original.status?.providerID ?? '')?.vmName ?? '';
  let evictedAt: number | undefined;
  const unsubscribe = stack.emulator.controls.onVmChange((change) => {
    if (change.type === 'evicted' && change.vm.name === vmName) evictedAt = Date.now();
  });
  const sweepsBegun: number[] = [];
  const unsubscribeHost = functionAppOf(stack).host.on((event) => {
    if (event.type === 'function.invoked' && event.functionName === TriggerNames.lifecycleSweep)
      sweepsBegun.push(Date.now());
  });
  try {
    await untilSecondOfSweepPeriod(NOTICE_OFFSET_SECONDS);
    const noticeAt = Date.now();
    const notice = stack.emulator.controls.preemptVm(vmName, { noticeMs: 30_000 });
    expect(notice.evictionPolicy).toBe('Delete');
    const replacementOf = (c: NodeClaim) =>
      c.metadata.annotations?.['karpenter.azure.com/replacement-of'] === original.metadata.name;
    const replacementAt = await pollUntilDefined(
      'the replacement NodeClaim created',
      async () => ((await ofPool()).some(replacementOf) ? Date.now() : undefined),
      30_000,
    );
    process.stderr.write(
      `spot preemption: notice → replacement NodeClaim in ${replacementAt - noticeAt} ms\n`,
    );
    // The event answered: no sweep began between the notice and the replacement.
    expect(sweepsBegun.filter((at) => at >= noticeAt && at <= replacementAt)).toEqual([]);
    const movedAt = await pollUntilDefined(
      'the pod Running on another node',
      async () => ((await runningOn()).some((p) => p.spec?.nodeName !== oldNode) ? Date.now() : undefined),
      60_000,
    );
    // Azure evicts at notBefore; the drained node's VM is usually deleted by termination before that, and
    // then there is nothing left to evict.
    expect(movedAt).toBeLessThan(Date.parse(notice.notBefore));
    await pollUntilDefined(
      'the preempted VM gone (evicted, or deleted by termination)',
      () =>
        Promise.resolve(stack.emulator.controls.vms().some((vm) => vm.name === vmName) ? undefined : true),
      60_000,
    );
    if (evictedAt !== undefined) expect(movedAt).toBeLessThan(evictedAt);

    const claims = await ofPool();
    const replacement = claims.find(replacementOf);
    expect(replacement).toBeDefined();
    // The preempted offering (size and zone, spot) was remembered: the replacement is another offering.
    const offeringOf = (c: NodeClaim | undefined) =>
      `${c?.metadata.labels?.[WellKnown.instanceTypeLabel] ?? ''}/${c?.metadata.labels?.[WellKnown.zoneLabel] ?? ''}`;
    expect(offeringOf(replacement)).not.toBe(offeringOf(original));
    // The old NodeClaim goes through termination cleanly.
    await pollUntilDefined(
      'the preempted NodeClaim gone',
      async () => ((await ofPool()).some((c) => c.metadata.uid === original.metadata.uid) ? undefined : true),
      60_000,
    );
  } finally {
    unsubscribe();
    unsubscribeHost();
    await apps.deleteNamespacedDeployment({ namespace: 'default', name }).catch(() => undefined);
    await objects.nodePools.delete(name).catch(() => undefined);
  }
}, 300_000);

/** Waits until the wall clock is `offset` seconds into a sweep period (NCRONTAB fires on the clock). */
async function untilSecondOfSweepPeriod(offset: number): Promise<void> {
  const periodMs = SWEEP_PERIOD_SECONDS * 1000;
  const waitMs = (offset * 1000 - (Date.now() % periodMs) + periodMs) % periodMs;
  await new Promise((resolve) => setTimeout(resolve, waitMs));
}
