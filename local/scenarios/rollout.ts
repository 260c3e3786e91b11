// rollout: a node image rollout as docs/rollouts.md tells it, on a static NodePool of 10 nodes with a
// Drifted budget of "3" and one pod per node (the pod gates need pods to judge). First AKS publishes a
// node image whose pods crash-loop: the class moves to it, every node drifts (ImageDrift), the rollout
// replaces one canary, a gate sees its pod fail, and the version is rolled back
// (status.rolledBackVersions): the canary is replaced back and the other nine are never touched. Then a
// healthy version: a canary, its soak, waves of at most 3, RolledOut=True. The summary prices the gates:
// the good rollout's makespan beside the same change replaced at the budget alone (the Immediate policy),
// estimated from the replacement time the waves measured. The phases are exported for the end-to-end
// tests, which play a kubeletNeverReady image and a pinned class with them.
import { CoordinationV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import type { V1Deployment } from '@kubernetes/client-node';
import { imageVersionOf } from '../../shared/cloudprovider/azure/decisions/node-image-versions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { ROLLED_OUT_CONDITION, RolledOutReasons } from '../../shared/decisions/rollout-condition.js';
import { RolloutGates } from '../../shared/decisions/rollout-gates.js';
import { rolloutStateOf, type RolloutPhase, type RolloutState } from '../../shared/decisions/rollout.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../../shared/models/index.js';
import { communityGalleryImageIdOf, type NodeImageBehavior } from '../arm-emulator/index.js';
import { reconcileNodeClassStatus } from '../../shared/lifecycle/status/nodeclass-status.js';
import { reconcileNodePoolStatus } from '../../shared/lifecycle/status/nodepool-status.js';
import { RUN_LABEL, type LocalStack } from '../stack/local-stack.js';
import type { Observed, PodView } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import { pauseContainer } from './deployment-set.js';
import { disruptionCounts } from './drift-budget.js';
import {
  claimsOfPool,
  createNodeClassAndPool,
  exampleNodePool,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const REPLICAS = 10;
const BUDGET = 3;
/** The Azure provider's drift reason for a node whose image is none of its class's effective images. */
const IMAGE_DRIFT = 'ImageDrift';

export const rollout: Scenario = {
  name: 'rollout',
  title: `node image rollout on ${REPLICAS} nodes, budget "${BUDGET}": a crash-looping image rolled back after its canary, a healthy one rolled out in waves`,
  description:
    `A static NodePool of ${REPLICAS} nodes, budget "${BUDGET}", one pod per node. AKS publishes a node image whose ` +
    'pods crash-loop: every node drifts, the rollout replaces one canary, a pod gate fails and the version is rolled ' +
    'back (no other node touched, one VM ever ran it). Then a healthy image: a canary, its soak, waves of at most ' +
    `${BUDGET}, RolledOut=True; the summary sets the makespan beside the budget alone (Immediate, estimated).`,
  usesPods: true,
  play,
};

/**
 * The same story cut to its failure for a node that never comes up: the canary's replacement never goes
 * Ready, ReplacementFailed fails once it is not Initialized in time, the version is rolled back, and the
 * old node the canary was to replace is still there. Not in the default list: the end-to-end test plays it.
 */
export const rolloutNeverReady: Scenario = {
  name: 'rollout-never-ready',
  title: 'a node image whose kubelet never goes Ready: the canary fails ReplacementFailed and is rolled back',
  description:
    'A static NodePool of 4 nodes, budget "2", one pod per node. AKS publishes a node image whose kubelet never posts ' +
    "Ready: the canary's replacement never initializes, ReplacementFailed fails, the version is rolled back, and " +
    'no old node was deleted for it.',
  usesPods: true,
  play: async (context) => {
    const pool = await setUpRolloutPool(context, {
      name: `rollout-nr-${context.runId}`,
      replicas: 4,
      budget: 2,
    });
    try {
      const bad = await badImageRollout(pool, 'kubeletNeverReady', [RolloutGates.replacementFailed]);
      const teardown = await tearDownRolloutPool(pool);
      return {
        invariants: [...bad.invariants, ...teardown.invariants, onePutPerVm(pool)],
        summary: [...bad.summary, ...teardown.summary],
        marks: pool.marks,
        figures: { ...bad.figures, teardownMs: teardown.ms },
      };
    } finally {
      await tearDownRolloutPool(pool);
    }
  },
};

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const pool = await setUpRolloutPool(context, {
    name: `rollout-${context.runId}`,
    replicas: REPLICAS,
    budget: BUDGET,
  });
  try {
    const bad = await badImageRollout(pool, 'podsCrash', [
      RolloutGates.podRestarts,
      RolloutGates.podNotReady,
    ]);
    const good = await goodImageRollout(pool);
    const teardown = await tearDownRolloutPool(pool);
    const statusCounts = nodePoolStatusCounts(pool);
    return {
      invariants: [
        ...bad.invariants,
        ...good.invariants,
        statusCounts,
        onePutPerVm(pool),
        ...teardown.invariants,
      ],
      summary: [...bad.summary, ...good.summary, ...teardown.summary],
      marks: pool.marks,
      figures: { ...bad.figures, ...good.figures, teardownMs: teardown.ms },
    };
  } finally {
    await tearDownRolloutPool(pool);
  }
}

// ---------------------------------------------------------------------------------------------------
// The pool: a class, a static NodePool, one pod per node, and every version of the NodePool.

export interface RolloutPool {
  context: ScenarioContext;
  /** The NodePool's, its AKSNodeClass's and its Deployment's name. */
  name: string;
  replicas: number;
  budget: number;
  /** The Deployment of one pod per node; undefined when the pool was set up without pods. */
  app: string | undefined;
  /** Every version of the NodePool the watch delivered: its rollout annotation and its status. */
  versions: Observed<NodePool>[];
  marks: TimelineMark[];
  /** The image version the pool's nodes ran when it was up. */
  initialVersion: string;
  stopWatching(): void;
  /** Node image versions this pool's phases published (withdrawn at the tear-down). */
  published: string[];
  /** On a scoped stack: the status reconciliation the scenario runs for its own objects (see below). */
  statusStandIn: StatusStandIn | undefined;
  tornDown: boolean;
}

export interface RolloutPoolOptions {
  name: string;
  replicas: number;
  budget: number;
  /** One pod per node (the pod gates judge them); default true. */
  pods?: boolean;
}

/** Creates the class, the static NodePool and its pods, and waits until every node and pod is up. */
export async function setUpRolloutPool(
  context: ScenarioContext,
  options: RolloutPoolOptions,
): Promise<RolloutPool> {
  const { stack, recorder, runId } = context;
  const { name, replicas, budget } = options;
  const nodePool = exampleNodePool(name, runId, name, String(budget));
  nodePool.spec = { ...nodePool.spec, replicas };
  const watched = watchNodePool(stack.kubeconfigPath, name);
  await createNodeClassAndPool(context, nodePool);
  const statusStandIn = startStatusStandIn(stack, name);
  const app = options.pods === false ? undefined : name;
  if (app) {
    await context.apps.createNamespacedDeployment({
      namespace: context.namespace,
      body: onePodPerNode(app, runId, name, replicas),
    });
  }
  context.note(
    `static NodePool ${name}: replicas ${replicas}, budget "${budget}"${app ? `, ${replicas} pods one per node` : ''}`,
  );
  const pool: RolloutPool = {
    context,
    name,
    replicas,
    budget,
    app,
    versions: watched.versions,
    marks: [],
    initialVersion: '?',
    stopWatching: watched.stop,
    published: [],
    statusStandIn,
    tornDown: false,
  };
  try {
    const claims = await waitFor(
      context,
      `${replicas} initialized nodes${app ? ' and their pods Ready' : ''}`,
      patience(stack, 6),
      () => {
        const of = claimsOfPool(recorder, name).filter((c) => !c.metadata.deletionTimestamp);
        const podsUp = app === undefined || readyPods(context, app).length === replicas;
        return of.length === replicas && of.every(initialized) && podsUp ? of : undefined;
      },
      () => `${claimsOfPool(recorder, name).filter(initialized).length} initialized`,
    );
    const versions = new Set(claims.map(versionOfClaim));
    pool.initialVersion = [...versions][0] ?? '?';
    context.note(`${replicas} nodes up on node image ${[...versions].join(', ')}`);
    return pool;
  } catch (error) {
    // Never up: nothing of the pool may stay behind for the next scenario.
    await tearDownRolloutPool(pool);
    throw error;
  }
}

/** A Deployment of `replicas` pods on the NodePool, at most one per node (required anti-affinity). */
function onePodPerNode(app: string, runId: string, nodePool: string, replicas: number): V1Deployment {
  const labels = { app, [RUN_LABEL]: runId };
  return {
    metadata: { name: app },
    spec: {
      replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          // Only the scenario's own NodePool: e2e files share one control plane and play at the same time.
          nodeSelector: { [WellKnown.nodePoolLabel]: nodePool },
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app } } },
              ],
            },
          },
          containers: [pauseContainer({ cpu: '100m', memory: '128Mi' })],
        },
      },
    },
  };
}

/**
 * Records every version of one NodePool (the recorder keeps only the latest): a list, then a watch from
 * its version, resumed from the last version delivered when it ends, listed again after 410 Gone.
 */
function watchNodePool(
  kubeconfigPath: string,
  name: string,
): { versions: Observed<NodePool>[]; stop(): void } {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const watch = new Watch(config);
  const custom = config.makeApiClient(CustomObjectsApi);
  const fieldSelector = `metadata.name=${name}`;
  const versions: Observed<NodePool>[] = [];
  const seen = new Set<string>();
  let version: string | undefined;
  let stopped = false;
  let abort: AbortController | undefined;
  const record = (type: Observed<NodePool>['type'], object: NodePool): void => {
    const resourceVersion = object.metadata.resourceVersion ?? '';
    if (type !== 'DELETED' && seen.has(resourceVersion)) return;
    seen.add(resourceVersion);
    versions.push({ at: Date.now(), type, object });
  };
  const reopen = (delayMs: number): void => {
    if (!stopped) setTimeout(() => void open(), delayMs);
  };
  const open = async (): Promise<void> => {
    if (stopped) return;
    try {
      if (version === undefined) {
        const list = (await custom.listClusterCustomObject({
          group: 'karpenter.sh',
          version: 'v1',
          plural: 'nodepools',
          fieldSelector,
        })) as { items?: NodePool[]; metadata?: { resourceVersion?: string } };
        for (const item of list.items ?? []) record('MODIFIED', item);
        version = list.metadata?.resourceVersion ?? '';
      }
      abort = await watch.watch(
        '/apis/karpenter.sh/v1/nodepools',
        { fieldSelector, resourceVersion: version, allowWatchBookmarks: true },
        (type: string, object: NodePool & { code?: number }) => {
          if (type === 'ERROR') {
            if (object.code === 410) version = undefined;
            return;
          }
          if (object.metadata?.resourceVersion) version = object.metadata.resourceVersion;
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') record(type, object);
        },
        (error: unknown) => {
          if ((error as { statusCode?: number } | null)?.statusCode === 410) version = undefined;
          reopen(200);
        },
      );
    } catch {
      reopen(500);
    }
  };
  void open();
  return {
    versions,
    stop: () => {
      stopped = true;
      abort?.abort();
    },
  };
}

/** The status reconciliation a scenario runs for its own objects on a scoped stack (startStatusStandIn). */
export interface StatusStandIn {
  /** Rounds done: each reconciled the class, then the NodePool. */
  rounds(): number;
  stop(): Promise<void>;
}

/**
 * A scoped stack's sweep writes no status (shared/lifecycle/sweep/status-step.ts: a sweep confined to some
 * NodeClaims does not own the cluster's classes), yet a node image rollout runs on its class's status (the
 * effective images, their fall-back after a rollback) and says how it went in its NodePool's. So on a
 * scoped stack (the end-to-end tests, which share a control plane) the scenario runs the app's own status
 * reconciliation for its own class and NodePool at the sweep's period, classes first as the status step
 * does; npm start's stack is not scoped, and its sweep does this itself.
 */
function startStatusStandIn(stack: LocalStack, name: string): StatusStandIn | undefined {
  const deps = stack.app?.deps;
  if (!stack.sweepScope || !deps) return undefined;
  let stopped = false;
  let rounds = 0;
  const selector = `${WellKnown.nodePoolLabel}=${name}`;
  const sameProvider = (a: string | undefined, b: string | undefined) =>
    a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
  const round = async (): Promise<void> => {
    const nodeClass = await deps.objects.nodeClasses.get(name);
    const written = nodeClass ? (await reconcileNodeClassStatus(deps, nodeClass)).object : undefined;
    const nodePool = await deps.objects.nodePools.get(name);
    if (!nodePool || nodePool.metadata.deletionTimestamp) return;
    const [nodeClaims, nodes] = await Promise.all([
      deps.objects.nodeClaims.list({ labelSelector: selector }),
      deps.nodes.listLabelled(selector),
    ]);
    await reconcileNodePoolStatus(
      deps,
      nodePool,
      {
        nodeClaims,
        nodesOf: (c) => nodes.filter((n) => sameProvider(n.spec.providerID, c.status?.providerID)),
      },
      written,
    );
  };
  const loop = (async () => {
    while (!stopped) {
      // A conflict or an object gone meanwhile: the next round reads again, as the next sweep would.
      await round().then(
        () => (rounds += 1),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, stack.timings.sweepPeriodSeconds * 1000));
    }
  })();
  return {
    rounds: () => rounds,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// A bad node image: published, the canary fails a gate, the version is rolled back.

export interface PhaseResult {
  invariants: Invariant[];
  summary: string[];
  figures: Record<string, number | string>;
}

/**
 * Publishes a node image version with `behavior` and waits until the rollout has rolled it back: the
 * NodePool RolledOut=False RolledBack, every NodeClaim of the pool on the version it ran before and
 * Initialized, and (with pods) every pod Ready again.
 */
export async function badImageRollout(
  pool: RolloutPool,
  behavior: NodeImageBehavior,
  expectedGates: readonly string[],
): Promise<PhaseResult> {
  const { context, name, replicas } = pool;
  const { stack, recorder } = context;
  const before = new Set(liveClaims(pool).map((c) => c.metadata.name));
  const goodVersion = pool.initialVersion;
  const publishedAt = Date.now();
  const version = publishNextVersion(pool, behavior);
  context.note(`published node image ${version} (${behavior})`);

  const driftedAt = await waitFor(
    context,
    `every node drifted to ${version} (ImageDrift)`,
    patience(stack, 2),
    () =>
      historyHas(pool, before, publishedAt, (c) => driftReason(c) === IMAGE_DRIFT) ? Date.now() : undefined,
  );
  const rollbackAt = await waitFor(
    context,
    `a gate to fail and ${version} to be rolled back`,
    patience(
      stack,
      4,
      (stack.timings.rollout.initializedWithinSeconds + stack.timings.rollout.podReadyWithinSeconds) * 1000,
    ),
    () => firstVersionWhere(pool, publishedAt, (s) => s?.phase === 'rollback')?.at,
    () => `rollout phase ${phaseNow(pool) ?? 'none'}`,
  );
  context.note(`a gate failed: ${gateNow(pool)?.name ?? '?'}; rolling back ${version}`);
  const rolledBack = await waitFor(
    context,
    `${version} rolled back: RolledOut=False RolledBack, every node on ${goodVersion}`,
    patience(stack, 6),
    () => {
      const np = recorder.nodePools.get(name);
      const condition = findCondition(np?.status?.conditions, ROLLED_OUT_CONDITION);
      const claims = liveClaims(pool);
      return condition?.status === 'False' &&
        condition.reason === RolledOutReasons.rolledBack &&
        claims.length === replicas &&
        claims.every((c) => initialized(c) && versionOfClaim(c) === goodVersion) &&
        (pool.app === undefined || readyPods(context, pool.app).length === replicas)
        ? Date.now()
        : undefined;
    },
    () => {
      const np = recorder.nodePools.get(name);
      const condition = findCondition(np?.status?.conditions, ROLLED_OUT_CONDITION);
      const claims = liveClaims(pool);
      return `RolledOut ${condition?.status ?? '?'} ${condition?.reason ?? ''}; ${claims.length} NodeClaims, versions ${[...new Set(claims.map(versionOfClaim))].join(', ')}; phase ${phaseNow(pool) ?? 'none'}`;
    },
  );
  context.note(`${version} rolled back; every node on ${goodVersion}`);

  const rollbackState = firstVersionWhere(pool, publishedAt, (s) => s?.phase === 'rollback');
  const gate = rollbackState ? rolloutStateOf(rollbackState.object)?.gate : undefined;
  const nodeClass = await stack.admin.objects.nodeClasses.get(name);
  const rejected = (nodeClass?.status?.rolledBackVersions ?? []).find(
    (v) => v.imageVersion === version && v.nodePool === name,
  );
  const events = await nodePoolEvents(context, name);
  const gateEvent = events.find(
    (e) => e.reason === 'RolloutGateFailed' && expectedGates.some((g) => e.message.includes(g)),
  );
  const badPuts = successfulPuts(pool).filter((p) => p.version === version);
  const badVms = new Set(badPuts.map((p) => p.vmName));
  const window = historyBetween(pool, publishedAt, rolledBack);
  const counted = disruptionCounts(window.nodeClaims, window.nodes, before);
  const disruptedOld = new Set(counted.starts.map((s) => s.name));
  const oldDeleted = [...before].filter((n) =>
    recorder.history.nodeClaims.some(
      (o) =>
        o.at >= publishedAt &&
        o.object.metadata.name === n &&
        (o.type === 'DELETED' || o.object.metadata.deletionTimestamp),
    ),
  );
  // A replacement that never initialized is no drift candidate: say what removed it.
  const badClaims = [
    ...new Set(
      recorder.history.nodeClaims
        .filter(
          (o) =>
            o.at >= publishedAt &&
            o.object.metadata.labels?.[WellKnown.nodePoolLabel] === name &&
            versionOfClaim(o.object) === version,
        )
        .map((o) => o.object.metadata.name),
    ),
  ];
  const repaired = await repairedOf(context, badClaims);
  for (const row of badClaims) {
    pool.marks.push({
      row,
      at: rollbackAt,
      label: `${gate?.name ?? 'a gate'} failed: rolled back`,
      kind: 'failure',
    });
  }
  const neverReady = behavior === 'kubeletNeverReady';
  const invariants: Invariant[] = [
    {
      name: `the bad version ${version} ran on the canary only (at most 1 VM)`,
      holds: badVms.size <= 1,
      detail: `${badVms.size} VM(s) created from ${version}: ${[...badVms].join(', ') || 'none'}`,
    },
    {
      name: 'only the canary was disrupted: no other old node touched',
      holds: disruptedOld.size <= 1 && counted.maxInFlight <= 1,
      detail: `${disruptedOld.size} of ${before.size} old nodes disrupted (${[...disruptedOld].join(', ') || 'none'}), at most ${counted.maxInFlight} at once`,
    },
    {
      name: `a ${expectedGates.join(' or ')} gate failed and the NodePool says so`,
      holds:
        gate !== undefined &&
        expectedGates.some((g) => gate.name.split(',').includes(g)) &&
        gateEvent !== undefined,
      detail: `gate ${gate?.name ?? 'none'}: ${gate?.message ?? ''}; RolloutGateFailed Event: ${gateEvent?.message ?? 'none'}`,
    },
    {
      name: `${version} rolled back: on the class's status.rolledBackVersions, RolledOut=False RolledBack`,
      holds: rejected !== undefined,
      detail: rejected ? `rolledBackVersions: ${rejected.imageVersion} (${rejected.reason})` : 'not listed',
    },
    {
      name: `every NodeClaim of the pool back on ${goodVersion}`,
      holds: liveClaims(pool).every((c) => versionOfClaim(c) === goodVersion),
      detail: `${liveClaims(pool).length} NodeClaims on ${[...new Set(liveClaims(pool).map(versionOfClaim))].join(', ')}`,
    },
  ];
  if (neverReady) {
    invariants.push({
      name: 'no old node was deleted for a replacement that never initialized',
      holds: oldDeleted.length === 0,
      detail:
        oldDeleted.length === 0
          ? `all ${before.size} old NodeClaims kept`
          : `deleted: ${oldDeleted.join(', ')}`,
    });
  }
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    invariants,
    summary: [
      `bad image ${version} (${behavior}): every node drifted ${s(driftedAt - publishedAt)} after the publish; gate ${gate?.name ?? '?'} failed ${s(rollbackAt - publishedAt)} after the publish; rolled back (every node on ${goodVersion}) in ${s(rolledBack - publishedAt)}; ${badVms.size} VM ran it, ${disruptedOld.size} old node disrupted`,
      `the node(s) that ran ${version} (${badClaims.join(', ') || 'none'}) removed by ${repaired.length > 0 ? `node repair (${repaired.join(', ')}): a replacement that never initialized is no drift candidate` : "the rollback's drift replacement"}`,
    ],
    figures: {
      badVersion: version,
      badGate: gate?.name ?? '',
      badGateFailedMs: rollbackAt - publishedAt,
      rolledBackMs: rolledBack - publishedAt,
      badVersionVms: badVms.size,
      badOldNodesDisrupted: disruptedOld.size,
      badRemovedByRepair: repaired.length,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// A good node image: published, rolled out by a canary, its soak and waves at the budget.

/**
 * Publishes a healthy node image version and waits until it is rolled out: phase rolledOut,
 * RolledOut=True, every NodeClaim on it, the NodePool's status counting every node up to date and Ready.
 */
export async function goodImageRollout(pool: RolloutPool): Promise<PhaseResult> {
  const { context, name, replicas, budget } = pool;
  const { stack, recorder } = context;
  const old = new Set(liveClaims(pool).map((c) => c.metadata.name));
  const publishedAt = Date.now();
  const version = publishNextVersion(pool, 'healthy');
  context.note(`published node image ${version} (healthy)`);
  const driftedAt = await waitFor(
    context,
    `every node drifted to ${version} (ImageDrift)`,
    patience(stack, 2),
    () =>
      historyHas(pool, old, publishedAt, (c) => driftReason(c) === IMAGE_DRIFT) ? Date.now() : undefined,
  );
  const result = await awaitRolledOut(pool, version, publishedAt, old);
  const { rolledOutAt, target } = result;

  const states = statesOf(pool, publishedAt).filter((o) => o.state.target === target);
  const window = historyBetween(pool, publishedAt, rolledOutAt);
  const all = disruptionCounts(window.nodeClaims, window.nodes, old);
  const waves = waveTimes(states, all.starts);
  const canaryEnded = waves.find((w) => w.wave === 2)?.seenAt ?? rolledOutAt;
  for (const wave of waves) {
    const first = all.starts.find((s) => s.at >= wave.seenAt);
    if (first) pool.marks.push({ row: first.name, at: first.at, label: `wave ${wave.wave}`, kind: 'note' });
  }
  const beforeSoak = historyBetween(pool, publishedAt, canaryEnded);
  const canary = disruptionCounts(beforeSoak.nodeClaims, beforeSoak.nodes, old);
  const sizes = waves.map((w) => w.size);
  const finalWave = states.at(-1)?.state.wave ?? 0;
  const expectedWaves = 1 + Math.ceil((replicas - 1) / budget);
  const full = waves.filter((w) => w.wave >= 2 && w.replacedMs !== undefined);
  const perWaveMs =
    full.length > 0 ? full.reduce((sum, w) => sum + (w.replacedMs ?? 0), 0) / full.length : NaN;
  const startedAt = states[0]?.at ?? publishedAt;
  const makespanMs = rolledOutAt - publishedAt;
  const immediateCycles = Math.ceil(replicas / budget);
  // Immediate replaces from the sweep that marks the drift, at the budget, with no workflow to start.
  const immediateMs = driftedAt - publishedAt + immediateCycles * perWaveMs;
  const np = recorder.nodePools.get(name);
  const status = np?.status;
  const claims = liveClaims(pool);
  const invariants: Invariant[] = [
    {
      name: 'only the canary disrupting until its soak ended',
      holds: canary.maxInFlight <= 1 && new Set(canary.starts.map((s) => s.name)).size === 1,
      detail: `${new Set(canary.starts.map((s) => s.name)).size} old node(s) disrupted before wave 2 began, at most ${canary.maxInFlight} at once`,
    },
    {
      name: `never more than ${budget} old nodes disrupting at once`,
      holds: all.maxInFlight <= budget,
      detail: `at most ${all.maxInFlight} disrupting; waves of ${sizes.join(', ')} nodes`,
    },
    {
      name: `a canary then waves of at most ${budget}: ${expectedWaves} waves`,
      holds: finalWave === expectedWaves && sizes[0] === 1 && sizes.slice(1).every((n) => n <= budget),
      detail: `${finalWave} waves, sizes ${sizes.join(', ')}`,
    },
    {
      name: `every node on ${version}, RolledOut=True, status ${replicas}/${replicas}/${replicas}`,
      holds:
        claims.length === replicas &&
        claims.every((c) => versionOfClaim(c) === version) &&
        status?.nodes === replicas &&
        status.upToDateNodes === replicas &&
        status.readyNodes === replicas &&
        status.observedGeneration === np?.metadata.generation,
      detail: `${claims.length} NodeClaims on ${[...new Set(claims.map(versionOfClaim))].join(', ')}; status nodes ${status?.nodes}, upToDate ${status?.upToDateNodes}, ready ${status?.readyNodes}, observedGeneration ${status?.observedGeneration} of ${np?.metadata.generation}`,
    },
  ];
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    invariants,
    summary: [
      `good image ${version}: rolled out in ${s(makespanMs)} (rollout started ${s(startedAt - publishedAt)} after the publish), ${finalWave} waves of ${sizes.join(', ')}, at most ${all.maxInFlight} disrupting at once`,
      `per wave: ${waves.map((w) => `wave ${w.wave} replaced in ${w.replacedMs === undefined ? '?' : s(w.replacedMs)}`).join(', ')}; soak ${stack.timings.rollout.soakSeconds} s each`,
      `the same change under Immediate (budget "${budget}" alone, no canary, no soak): the drift ${s(driftedAt - publishedAt)} after the publish + ~${immediateCycles} cycles × ${s(perWaveMs)} = ${s(immediateMs)} (estimated) → the gates cost ${s(makespanMs - immediateMs)} (${(makespanMs / immediateMs).toFixed(1)}×)`,
    ],
    figures: {
      goodVersion: version,
      goodMakespanMs: makespanMs,
      goodStartMs: startedAt - publishedAt,
      goodDriftMs: driftedAt - publishedAt,
      goodWaves: finalWave,
      goodWaveSizes: sizes.join(','),
      goodMaxInFlight: all.maxInFlight,
      perWaveReplacementMs: Math.round(perWaveMs),
      immediateEstimatedMs: Math.round(immediateMs),
      gatesCostMs: Math.round(makespanMs - immediateMs),
    },
  };
}

/**
 * Waits until the pool has rolled out `version`: the rollout of the class's current target in phase
 * rolledOut, RolledOut=True, every NodeClaim on it and Initialized, the status counting them all.
 */
export async function awaitRolledOut(
  pool: RolloutPool,
  version: string,
  from: number,
  old: ReadonlySet<string>,
): Promise<{ rolledOutAt: number; target: string }> {
  const { context, name, replicas, budget } = pool;
  const { stack, recorder } = context;
  const t = stack.timings;
  const waves = 1 + Math.ceil((replicas - 1) / budget);
  const designedMs = waves * (t.rollout.soakSeconds + t.sweepPeriodSeconds + t.rollout.pollSeconds) * 1000;
  return waitFor(
    context,
    `${version} rolled out: RolledOut=True, every node on it`,
    patience(stack, 4 * waves, designedMs),
    () => {
      const np = recorder.nodePools.get(name);
      const state = np ? rolloutStateOf(np) : undefined;
      const condition = findCondition(np?.status?.conditions, ROLLED_OUT_CONDITION);
      const status = np?.status;
      const claims = liveClaims(pool);
      return state?.phase === 'rolledOut' &&
        condition?.status === 'True' &&
        claims.length === replicas &&
        claims.every((c) => !old.has(c.metadata.name) && initialized(c) && versionOfClaim(c) === version) &&
        status?.nodes === replicas &&
        status.upToDateNodes === replicas &&
        status.readyNodes === replicas &&
        (pool.app === undefined || readyPods(context, pool.app).length === replicas) &&
        firstVersionWhere(pool, from, (s) => s?.phase === 'rolledOut' && s.target === state.target)
        ? { rolledOutAt: Date.now(), target: state.target }
        : undefined;
    },
    () => {
      const np = recorder.nodePools.get(name);
      const state = np ? rolloutStateOf(np) : undefined;
      const claims = liveClaims(pool);
      return `phase ${state?.phase ?? 'none'} wave ${state?.wave ?? '-'}; ${claims.filter((c) => versionOfClaim(c) === version).length} of ${claims.length} NodeClaims on ${version}`;
    },
  );
}

interface WaveTime {
  wave: number;
  /** When the watch first saw the wave (its state written). */
  seenAt: number;
  /** Wave start to the wave done (its soak's start), when it got there. */
  replacedMs?: number;
  /** Old nodes that started being replaced during the wave. */
  size: number;
}

/**
 * Each wave of one rollout: how long its replacements took (from its start to its soak's start, as the
 * state says) and how many old nodes started being replaced in it (as the recorder saw them).
 */
function waveTimes(
  states: readonly { at: number; state: RolloutState }[],
  starts: readonly { name: string; at: number }[],
): WaveTime[] {
  const waves: WaveTime[] = [];
  for (const { at, state } of states) {
    if (state.phase !== 'canary' && state.phase !== 'waves' && state.phase !== 'rolledOut') continue;
    let wave = waves.find((w) => w.wave === state.wave);
    if (!wave) {
      wave = { wave: state.wave, seenAt: at, size: 0 };
      waves.push(wave);
    }
    if (state.soakingSince && wave.replacedMs === undefined) {
      wave.replacedMs = Date.parse(state.soakingSince) - Date.parse(state.waveStartedAt);
    }
  }
  waves.forEach((wave, i) => {
    const until = waves[i + 1]?.seenAt ?? Infinity;
    wave.size = new Set(starts.filter((s) => s.at >= wave.seenAt && s.at < until).map((s) => s.name)).size;
  });
  return waves;
}

// ---------------------------------------------------------------------------------------------------
// Tear-down and the checks over the whole run.

/**
 * Deletes the Deployment and waits until its pods are gone (no pod is then rescheduled while nodes go),
 * then the NodePool, and waits until none of its NodeClaims, Nodes and VMs is left; the class last.
 * Idempotent: the scenario's finally calls it again when a phase threw.
 */
export async function tearDownRolloutPool(
  pool: RolloutPool,
): Promise<{ invariants: Invariant[]; summary: string[]; ms: number }> {
  const { context, name } = pool;
  const { stack, recorder } = context;
  if (pool.tornDown) return { invariants: [], summary: [], ms: 0 };
  pool.tornDown = true;
  const started = Date.now();
  const objects = stack.admin.objects;
  const vmNames = poolVmNames(pool);
  const leftovers = () => ({
    pods: pool.app === undefined ? [] : podsOf(context, pool.app).map((p) => p.metadata.name),
    nodeClaims: claimsOfPool(recorder, name).map((c) => c.metadata.name),
    nodes: [...recorder.nodes.keys()].filter((n) => vmNames.has(n)),
    vms: stack.emulator.controls
      .vms()
      .filter((vm) => vmNames.has(vm.name))
      .map((vm) => vm.name),
  });
  const describe = () => {
    const left = leftovers();
    return `left: ${left.pods.length} pods, ${left.nodeClaims.length} NodeClaims, ${left.nodes.length} Nodes, ${left.vms.length} VMs`;
  };
  let gone = true;
  try {
    if (pool.app) {
      await context.apps
        .deleteNamespacedDeployment({ namespace: context.namespace, name: pool.app })
        .catch(() => undefined);
      await waitFor(context, 'the pods to be gone', patience(stack, 2), () =>
        leftovers().pods.length === 0 ? true : undefined,
      );
    }
    await objects.nodePools.delete(name);
    await waitFor(
      context,
      'the NodePool, its NodeClaims, Nodes and VMs to be gone',
      patience(stack, 3),
      () => {
        const left = leftovers();
        return !recorder.nodePools.has(name) &&
          left.nodeClaims.length === 0 &&
          left.nodes.length === 0 &&
          left.vms.length === 0
          ? true
          : undefined;
      },
      describe,
    );
  } catch (error) {
    if (context.signal.aborted) throw error;
    gone = false;
  }
  await pool.statusStandIn?.stop();
  await objects.nodeClasses.delete(name).catch(() => undefined);
  pool.stopWatching();
  // Later scenarios of the same run launch from the gallery as it was at start.
  for (const version of pool.published.splice(0)) stack.emulator.controls.unpublishNodeImageVersion(version);
  const ms = Date.now() - started;
  return {
    invariants: [
      {
        name: 'nothing leaked after the tear-down: no VM, Node or NodeClaim of the pool',
        holds: gone,
        detail: `${describe()} ${((Date.now() - started) / 1000).toFixed(1)} s after the Deployment's deletion`,
      },
    ],
    summary: [
      `torn down in ${(ms / 1000).toFixed(1)} s: ${describe()}`,
      ...(pool.statusStandIn
        ? ['scoped stack: the class and NodePool status reconciled by the scenario at the sweep period']
        : []),
    ],
    ms,
  };
}

/** Every VM of the pool was created by one successful PUT (a retried launch finds its VM, never makes two). */
export function onePutPerVm(pool: RolloutPool): Invariant {
  const puts = successfulPuts(pool);
  const byVm = new Map<string, number>();
  for (const put of puts) byVm.set(put.vmName, (byVm.get(put.vmName) ?? 0) + 1);
  const twice = [...byVm].filter(([, n]) => n > 1);
  return {
    name: 'one successful VM PUT per VM name',
    holds: twice.length === 0 && byVm.size > 0,
    detail: `${puts.length} successful PUTs for ${byVm.size} VMs${twice.length ? `; more than one: ${twice.map(([vm, n]) => `${vm} ×${n}`).join(', ')}` : ''}`,
  };
}

/** The NodePool's status counts agree with themselves at every version the watch delivered. */
export function nodePoolStatusCounts(pool: RolloutPool): Invariant {
  const { replicas, budget } = pool;
  const bad: string[] = [];
  let judged = 0;
  for (const { object } of pool.versions) {
    const status = object.status;
    // The CRD defaults status.nodes to 0 at a status write that sets only conditions (the budget's
    // validation writes first); the counts are judged once the status step has reported them.
    if (status?.upToDateNodes === undefined || status.readyNodes === undefined) continue;
    judged += 1;
    const { upToDateNodes, readyNodes, observedGeneration } = status;
    const nodes = status.nodes ?? 0;
    const generation = object.metadata.generation ?? 0;
    const fine =
      observedGeneration !== undefined &&
      readyNodes >= 0 &&
      readyNodes <= nodes &&
      upToDateNodes >= 0 &&
      upToDateNodes <= nodes &&
      nodes <= replicas + budget &&
      observedGeneration <= generation;
    if (!fine) {
      bad.push(
        `rv ${object.metadata.resourceVersion}: nodes ${nodes}, upToDate ${upToDateNodes}, ready ${readyNodes}, observedGeneration ${observedGeneration} of ${generation}`,
      );
    }
  }
  return {
    name: `NodePool status consistent at every version: 0 ≤ ready ≤ nodes, 0 ≤ upToDate ≤ nodes ≤ ${replicas}+${budget}, observedGeneration ≤ generation`,
    holds: bad.length === 0 && judged > 0,
    detail: bad.length ? bad.slice(0, 5).join('; ') : `${judged} versions with the counts, all consistent`,
  };
}

// ---------------------------------------------------------------------------------------------------
// Reading what happened.

/**
 * Publishes a new node image version with `behavior`, named as AKS names a build (today's date, the next
 * free patch number) and dated now, so it is the newest; the tear-down withdraws it.
 */
export function publishNextVersion(pool: RolloutPool, behavior: NodeImageBehavior): string {
  const controls = pool.context.stack.emulator.controls;
  const known = new Set(controls.nodeImageVersions().map((v) => v.version));
  const today = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const stem = `${today.getUTCFullYear()}${pad(today.getUTCMonth() + 1)}.${pad(today.getUTCDate())}`;
  let patch = 0;
  while (known.has(`${stem}.${patch}`)) patch += 1;
  const version = `${stem}.${patch}`;
  controls.publishNodeImageVersion({ version, behavior });
  pool.published.push(version);
  return version;
}

function versionOfClaim(c: NodeClaim): string {
  return imageVersionOf(c.status?.imageID ?? '') ?? '?';
}

function initialized(c: NodeClaim): boolean {
  return findCondition(c.status?.conditions, ConditionTypes.initialized)?.status === 'True';
}

function driftReason(c: NodeClaim): string | undefined {
  const drifted = findCondition(c.status?.conditions, ConditionTypes.drifted);
  return drifted?.status === 'True' ? drifted.reason : undefined;
}

/** The pool's NodeClaims that are not being deleted. */
export function liveClaims(pool: RolloutPool): NodeClaim[] {
  return claimsOfPool(pool.context.recorder, pool.name).filter((c) => !c.metadata.deletionTimestamp);
}

function podsOf(context: ScenarioContext, app: string): PodView[] {
  return [...context.recorder.pods.values()].filter((p) => p.metadata.labels?.['app'] === app);
}

function readyPods(context: ScenarioContext, app: string): PodView[] {
  return podsOf(context, app).filter(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.status?.phase === 'Running' &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

/** Whether some version of each of `names` recorded since `from` satisfied `test`. */
function historyHas(
  pool: RolloutPool,
  names: ReadonlySet<string>,
  from: number,
  test: (c: NodeClaim) => boolean,
): boolean {
  const hit = new Set<string>();
  for (const o of pool.context.recorder.history.nodeClaims) {
    if (o.at >= from && names.has(o.object.metadata.name) && test(o.object)) hit.add(o.object.metadata.name);
  }
  return hit.size === names.size;
}

/** The rollout states of the NodePool's versions since `from`, in order. */
export function statesOf(pool: RolloutPool, from: number): { at: number; state: RolloutState }[] {
  return pool.versions.flatMap((o) => {
    const state = o.at >= from ? rolloutStateOf(o.object) : undefined;
    return state ? [{ at: o.at, state }] : [];
  });
}

/** The first NodePool version since `from` whose rollout state satisfies `test`. */
export function firstVersionWhere(
  pool: RolloutPool,
  from: number,
  test: (state: RolloutState | undefined) => boolean,
): Observed<NodePool> | undefined {
  return pool.versions.find((o) => o.at >= from && test(rolloutStateOf(o.object)));
}

function phaseNow(pool: RolloutPool): RolloutPhase | undefined {
  const np = pool.context.recorder.nodePools.get(pool.name);
  return np ? rolloutStateOf(np)?.phase : undefined;
}

function gateNow(pool: RolloutPool): RolloutState['gate'] {
  const np = pool.context.recorder.nodePools.get(pool.name);
  return np ? rolloutStateOf(np)?.gate : undefined;
}

/** The recorded NodeClaim and Node versions between two moments (for disruptionCounts). */
function historyBetween(pool: RolloutPool, from: number, to: number) {
  const { history } = pool.context.recorder;
  return {
    nodeClaims: history.nodeClaims.filter((o) => o.at >= from && o.at <= to),
    nodes: history.nodes.filter((o) => o.at >= from && o.at <= to),
  };
}

/** The VM names of every NodeClaim the pool ever had. */
function poolVmNames(pool: RolloutPool): Set<string> {
  const names = new Set<string>();
  for (const o of pool.context.recorder.history.nodeClaims) {
    if (o.object.metadata.labels?.[WellKnown.nodePoolLabel] === pool.name)
      names.add(vmNameFor(o.object.metadata.name));
  }
  return names;
}

/** The pool's successful VM PUTs in the emulator's request log, with the image version each asked for. */
export function successfulPuts(pool: RolloutPool): { vmName: string; version: string; at: string }[] {
  const vmNames = poolVmNames(pool);
  return pool.context.stack.emulator.controls
    .requests({ kind: 'putVm', method: 'PUT' })
    .filter((e) => e.vmName !== undefined && vmNames.has(e.vmName) && e.status >= 200 && e.status < 300)
    .map((e) => {
      const body = e.body as { properties?: Record<string, unknown> } | undefined;
      const image = communityGalleryImageIdOf(body?.properties ?? {});
      return { vmName: e.vmName ?? '', version: imageVersionOf(image ?? '') ?? '?', at: e.time };
    });
}

/** The Events about the NodePool (cluster-scoped objects' Events live in default). */
export async function nodePoolEvents(
  context: ScenarioContext,
  name: string,
): Promise<{ reason: string; message: string; type: string }[]> {
  const events = await context.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.kind=NodePool,involvedObject.name=${name}`,
  });
  return events.items.map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? '' }));
}

/** Of these NodeClaims, those node repair acted on (a NodeRepair* Event on the NodeClaim or its Node). */
async function repairedOf(context: ScenarioContext, nodeClaims: readonly string[]): Promise<string[]> {
  if (nodeClaims.length === 0) return [];
  const events = (await context.core.listNamespacedEvent({ namespace: 'default' })).items.filter((e) =>
    (e.reason ?? '').startsWith('NodeRepair'),
  );
  return nodeClaims.filter((name) =>
    events.some((e) => e.involvedObject.name === name || e.involvedObject.name === vmNameFor(name)),
  );
}

/** The sweep's Lease: where its namespace is, for counting sweeps by state. */
export function sweepLeaseNamespace(stack: LocalStack): string {
  return stack.sweepScope?.leaseNamespace ?? stack.appSettings['SYSTEM_NAMESPACE'] ?? 'kube-system';
}

/**
 * Counts the sweeps that began after it was created and have ended, by the sweep Lease's state: each
 * sweep takes the Lease (a new acquireTime) and releases it (no holder) when done. Polled, so it may miss
 * some: `count()` is a lower bound, which is what a wait for "at least n sweeps" needs.
 */
export function sweepCounter(stack: LocalStack): { count(): number; stop(): void } {
  const config = new KubeConfig();
  config.loadFromFile(stack.kubeconfigPath);
  const api = config.makeApiClient(CoordinationV1Api);
  const namespace = sweepLeaseNamespace(stack);
  const since = Date.now();
  const ended = new Set<number>();
  let stopped = false;
  const tick = async (): Promise<void> => {
    while (!stopped) {
      try {
        const lease = await api.readNamespacedLease({ name: 'nodeclaim-azure-sweep', namespace });
        const acquired = lease.spec?.acquireTime ? new Date(lease.spec.acquireTime).getTime() : NaN;
        if (!lease.spec?.holderIdentity && acquired > since) ended.add(acquired);
      } catch {
        // Not there yet, or the API server is busy: the next look counts.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  void tick();
  return {
    count: () => ended.size,
    stop: () => {
      stopped = true;
    },
  };
}
