// A pinned class holds its nodes while AKS publishes, and an unpin rolls the new image out (docs/node-images.md
// "Pinning", docs/rollouts.md). A static NodePool of 3 whose AKSNodeClass pins spec.versions to the cluster's
// Kubernetes version and the image its nodes run; a newer image is published: the class's
// status.latestImageVersion moves, its effective status.images do not, and over several sweeps no NodeClaim
// drifts, no rollout starts and no VM is created. Then the pin is removed (a JSON merge patch with null):
// every node drifts (ImageDrift), the rollout starts with its canary, and ends with every node on the new
// image and RolledOut=True. The real control plane, Azurite, the ARM emulator and the kubelet simulator play
// it; the sweeps are counted by the sweep Lease's state, never by time.
import { expect, test } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { rolloutStateOf } from '../../shared/decisions/rollout.js';
import type { AKSNodeClass, NodeClaim } from '../../shared/models/index.js';
import { ConditionTypes } from '../../shared/models/index.js';
import {
  awaitRolledOut,
  liveClaims,
  nodePoolStatusCounts,
  onePutPerVm,
  publishNextVersion,
  setUpRolloutPool,
  statesOf,
  successfulPuts,
  sweepCounter,
  tearDownRolloutPool,
  type RolloutPool,
} from '../../local/scenarios/rollout.js';
import {
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from '../../local/scenarios/scenario.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

const REPLICAS = 3;
const BUDGET = 2;
/** Sweeps (and status passes) the pin must hold through after the class has seen the new version. */
const SWEEPS_HELD = 4;

const pinnedRollout: Scenario = {
  name: 'rollout-pinned',
  title: 'a pinned class holds its nodes while a new image is published; unpinned, the image rolls out',
  description:
    `A static NodePool of ${REPLICAS} whose class pins its Kubernetes and node image versions; a newer image is ` +
    `published and nothing drifts for ${SWEEPS_HELD} sweeps; unpinned, the nodes drift and the image rolls out.`,
  usesPods: false,
  play,
};

test(
  'a pinned class does not move when a newer image is published; unpinned, it rolls out to every node',
  { timeout: 420_000 },
  async () => {
    const report = await playEndToEnd(pinnedRollout);
    expectInvariantsHold(report);
    expect(report.outcome.figures.heldSweeps).toBeGreaterThanOrEqual(SWEEPS_HELD);
    expect(report.outcome.figures.rolloutStartedWithCanary).toBe('yes');
  },
);

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const pool = await setUpRolloutPool(context, {
    name: `pinned-${context.runId}`,
    replicas: REPLICAS,
    budget: BUDGET,
    pods: false,
  });
  try {
    const outcome = await pinPublishUnpin(pool);
    const teardown = await tearDownRolloutPool(pool);
    return {
      ...outcome,
      invariants: [
        ...outcome.invariants,
        onePutPerVm(pool),
        nodePoolStatusCounts(pool),
        ...teardown.invariants,
      ],
      summary: [...outcome.summary, ...teardown.summary],
    };
  } finally {
    await tearDownRolloutPool(pool);
  }
}

async function pinPublishUnpin(pool: RolloutPool): Promise<ScenarioOutcome> {
  const { context, name } = pool;
  const { stack, recorder } = context;
  const classes = stack.admin.objects.nodeClasses;
  const readClass = async () => (await classes.get(name)) as AKSNodeClass;

  // Pin what the class runs now: the cluster's Kubernetes version and its current image.
  const before = await until(context, 'the class status with its versions', async () => {
    const status = (await readClass()).status;
    return status?.controlPlaneKubernetesVersion && status.latestImageVersion && status.images?.length
      ? status
      : undefined;
  });
  const pin = {
    kubernetesVersion: before.controlPlaneKubernetesVersion ?? '',
    nodeImageVersion: before.latestImageVersion ?? '',
  };
  await classes.mergePatch(name, { spec: { versions: pin } });
  context.note(
    `pinned: kubernetesVersion ${pin.kubernetesVersion}, nodeImageVersion ${pin.nodeImageVersion}`,
  );
  const pinned = await until(context, 'the pin taken (the class Ready at its generation)', async () => {
    const cls = await readClass();
    const ready = findCondition(cls.status?.conditions, 'Ready');
    return ready?.status === 'True' && ready.observedGeneration === cls.metadata.generation ? cls : undefined;
  });
  const imagesBefore = (pinned.status?.images ?? []).map((i) => i.id).sort();

  // Publish a newer image: only status.latestImageVersion may move.
  const version = publishNextVersion(pool, 'healthy');
  const publishedAt = Date.now();
  context.note(`published node image ${version}`);
  await until(context, `status.latestImageVersion ${version}`, async () =>
    (await readClass()).status?.latestImageVersion === version ? true : undefined,
  );
  const putsBefore = successfulPuts(pool).length;
  const standIn = pool.statusStandIn;
  const roundsFrom = standIn?.rounds() ?? 0;
  const sweeps = sweepCounter(stack);
  const seen: string[] = [];
  let lastClass: AKSNodeClass | undefined;
  const classReads = setInterval(() => {
    void readClass().then(
      (cls) => (lastClass = cls),
      () => undefined,
    );
  }, 100);
  const held = (): string[] => {
    const problems: string[] = [];
    const images = (lastClass?.status?.images ?? []).map((i) => i.id).sort();
    if (lastClass && JSON.stringify(images) !== JSON.stringify(imagesBefore))
      problems.push(`status.images moved to ${images.join(', ')}`);
    for (const claim of liveClaims(pool))
      if (drifted(claim)) problems.push(`${claim.metadata.name} drifted: ${driftOf(claim)}`);
    const np = recorder.nodePools.get(name);
    if (np && rolloutStateOf(np)) problems.push(`a rollout started: ${rolloutStateOf(np)?.phase}`);
    const puts = successfulPuts(pool).length;
    if (puts !== putsBefore) problems.push(`${puts - putsBefore} VM(s) created`);
    return problems;
  };
  try {
    await waitFor(
      context,
      `${SWEEPS_HELD} sweeps and status passes with the new version published`,
      patience(stack, 2, SWEEPS_HELD * stack.timings.sweepPeriodSeconds * 2_000),
      () => {
        for (const problem of held()) if (!seen.includes(problem)) seen.push(problem);
        const passes = standIn ? standIn.rounds() - roundsFrom : SWEEPS_HELD;
        return sweeps.count() >= SWEEPS_HELD && passes >= SWEEPS_HELD ? true : undefined;
      },
      () => `${sweeps.count()} sweeps`,
    );
  } finally {
    clearInterval(classReads);
    sweeps.stop();
  }
  const heldSweeps = sweeps.count();
  const heldPasses = standIn ? standIn.rounds() - roundsFrom : undefined;
  const heldMs = Date.now() - publishedAt;
  context.note(
    `${heldSweeps} sweeps with ${version} published: ${seen.length ? seen.join('; ') : 'nothing moved'}`,
  );

  // Unpin: the effective image moves to the newest, the nodes drift, and the rollout takes them.
  const old = new Set(liveClaims(pool).map((c) => c.metadata.name));
  const unpinnedAt = Date.now();
  await classes.mergePatch(name, { spec: { versions: null } });
  context.note('unpinned (spec.versions: null)');
  await waitFor(context, 'every node drifted (ImageDrift)', patience(stack, 2), () =>
    [...old].every((n) =>
      recorder.history.nodeClaims.some(
        (o) => o.at >= unpinnedAt && o.object.metadata.name === n && driftOf(o.object) === 'ImageDrift',
      ),
    )
      ? true
      : undefined,
  );
  const { rolledOutAt, target } = await awaitRolledOut(pool, version, unpinnedAt, old);
  const states = statesOf(pool, unpinnedAt).filter((s) => s.state.target === target);
  const first = states[0]?.state;
  const claims = liveClaims(pool);
  const finalClass = await readClass();
  const invariants: Invariant[] = [
    {
      name: `pinned, ${version} published: latestImageVersion moved, status.images did not, nothing drifted or launched`,
      holds: seen.length === 0 && heldSweeps >= SWEEPS_HELD,
      detail: `${heldSweeps} sweeps${heldPasses !== undefined ? ` and ${heldPasses} status passes` : ''} after latestImageVersion became ${version}: ${seen.length ? seen.join('; ') : `images stayed ${pin.nodeImageVersion}, no drift, no rollout, no VM`}`,
    },
    {
      name: 'unpinned: the rollout starts with its canary',
      holds: first?.phase === 'canary' && first.wave === 1,
      detail: `first state of the rollout: phase ${first?.phase ?? 'none'}, wave ${first?.wave ?? '-'}, floor ${first?.floor ?? '-'}`,
    },
    {
      name: `unpinned: every node on ${version}, RolledOut=True`,
      holds:
        claims.length === REPLICAS &&
        claims.every(
          (c) => !old.has(c.metadata.name) && c.status?.imageID?.endsWith(`/versions/${version}`),
        ) &&
        (finalClass.status?.images ?? []).every((i) => i.id.endsWith(`/versions/${version}`)),
      detail: `${claims.length} NodeClaims: ${claims.map((c) => c.status?.imageID?.split('/').at(-1) ?? '?').join(', ')}; class images ${(finalClass.status?.images ?? []).map((i) => i.id.split('/').at(-1)).join(', ')}`,
    },
  ];
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    invariants,
    summary: [
      `pinned to ${pin.nodeImageVersion}: ${version} published, held through ${heldSweeps} sweeps (${s(heldMs)} after the publish): ${seen.length ? seen.join('; ') : 'nothing moved'}`,
      `unpinned: rolled out to ${REPLICAS} nodes in ${s(rolledOutAt - unpinnedAt)}, ${states.at(-1)?.state.wave ?? '?'} waves`,
    ],
    marks: pool.marks,
    figures: {
      heldSweeps,
      rolloutStartedWithCanary: first?.phase === 'canary' ? 'yes' : 'no',
      unpinnedRolloutMs: rolledOutAt - unpinnedAt,
    },
  };
}

function drifted(claim: NodeClaim): boolean {
  return findCondition(claim.status?.conditions, ConditionTypes.drifted)?.status === 'True';
}

function driftOf(claim: NodeClaim): string | undefined {
  const condition = findCondition(claim.status?.conditions, ConditionTypes.drifted);
  return condition?.status === 'True' ? condition.reason : undefined;
}

/** Polls an API read until it answers, within the stack's patience. */
async function until<T>(
  context: ScenarioContext,
  what: string,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + patience(context.stack, 2);
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
