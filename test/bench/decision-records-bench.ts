// `npm run bench` decision records: what keeping "why" costs. A provisioning window writes one record;
// a disruption pass of a NodePool writes one when its decisions changed (a pass deciding the same again
// is written at most every RECORD_REFRESH_MS). Each figure is a real record built by the code that builds
// it in production (the solve and provisioningRecord; the disruption step over the fake lifecycle), sized
// by the table's own row encoding (rowOf: gzipped JSON): the bytes Azure Table storage would hold.
import { rowOf } from '../../shared/azure/decision-record-table.js';
import { MAX_RECORD_SUBJECTS } from '../../shared/decisions/explain/decision-record.js';
import { provisioningRecord } from '../../shared/decisions/explain/provisioning-record.js';
import { solve } from '../../shared/decisions/scheduling/index.js';
import { disruptionStepOf, RECORD_REFRESH_MS } from '../../shared/lifecycle/disruption/disruption-step.js';
import { disruptionMethods } from '../../shared/lifecycle/disruption/methods/methods.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import { fakeLifecycle, fakeSweepContext, FakeOrchestrations } from '../support/fake-lifecycle.js';
import { driftedNodeClaim, nodeOf } from '../support/method-pass.js';
import { benchPods } from './provisioning-bench.js';
import { benchCatalog } from './provisioning-catalog.js';

interface Row {
  what: string;
  subjects: number;
  recorded: number;
  writes: number;
  jsonKiB: number;
  storedKiB: number;
}

function provisioningRow(pods: number): Row {
  const catalog = benchCatalog();
  const result = solve({
    pods: benchPods('mixed + topology', pods),
    nodePools: [
      {
        name: 'default',
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        limits: { cpu: '10000000', memory: '10000000Gi' },
        instanceTypes: catalog,
      },
    ],
  });
  const record = provisioningRecord({
    windowId: `bench-${pods}`,
    at: new Date('2026-12-06T12:00:00Z'),
    result,
    nodeClaimNames: result.newNodeClaims.map((_, index) => `default-${index}`),
  });
  const { cost } = rowOf(record);
  return {
    what: `provisioning window, ${pods} pods (${result.newNodeClaims.length} NodeClaims)`,
    subjects: pods,
    recorded: record.pods.length,
    writes: 1,
    jsonKiB: cost.jsonBytes / 1024,
    storedKiB: cost.storedBytes / 1024,
  };
}

async function disruptionRows(nodes: number): Promise<Row[]> {
  const fake = fakeLifecycle();
  fake.deps.settings = {
    ...fake.deps.settings,
    rollout: { ...fake.deps.settings.rollout, policy: 'Immediate' },
  };
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: `bench-${nodes}`, uid: `bench-${nodes}` },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
      disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '10%' }] },
    },
    status: { conditions: [] },
  };
  const claims: NodeClaim[] = Array.from({ length: nodes }, (_, index) =>
    fake.nodeClaims.seed(driftedNodeClaim(`bench-${nodes}-${index}`, pool, 60)),
  );
  const nodeObjects = claims.map((claim) => nodeOf(claim));
  for (const node of nodeObjects) fake.nodes.seed(node);
  fake.nodePools.seed(pool);
  const step = disruptionStepOf(disruptionMethods);
  const view = { nodeClaims: claims, nodes: nodeObjects, nodePools: [pool] };
  const rows: Row[] = [];
  for (const pass of ['pass 1 (a drift at a 10% budget)', 'pass 2 (its first 10% in flight)', 'pass 3']) {
    const before = fake.decisionRecords.cost.get('disruption') ?? {
      records: 0,
      jsonBytes: 0,
      storedBytes: 0,
    };
    await step.run(fakeSweepContext(fake, new FakeOrchestrations(), view));
    const after = fake.decisionRecords.cost.get('disruption') ?? before;
    const record = fake.decisionRecords.records.at(-1);
    rows.push({
      what: `disruption pass, ${nodes} nodes: ${pass}`,
      subjects: nodes,
      recorded: record?.kind === 'disruption' ? record.candidates.length : 0,
      writes: after.records - before.records,
      jsonKiB: (after.jsonBytes - before.jsonBytes) / 1024,
      storedKiB: (after.storedBytes - before.storedBytes) / 1024,
    });
  }
  return rows;
}

export async function runDecisionRecordsBench(): Promise<void> {
  const timed = async <T>(what: string, run: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    const value = await run();
    process.stderr.write(
      `[bench] decision records: ${what} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return value;
  };
  const rows = [
    await timed('window of 1,000 pods', () => provisioningRow(1_000)),
    await timed('window of 5,000 pods', () => provisioningRow(5_000)),
  ];
  // The fake lifecycle clones every object it hands out, so its passes slow with the square of the nodes: a
  // thousand is as far as the bench goes (the record is bounded at 500 candidates from there on anyway).
  for (const nodes of [500, 1_000])
    rows.push(...(await timed(`passes over ${nodes} nodes`, () => disruptionRows(nodes))));
  const width = Math.max(...rows.map((r) => r.what.length));
  const lines = rows.map(
    (r) =>
      `${r.what.padEnd(width)}  ${String(r.writes).padStart(6)}  ${String(r.recorded).padStart(8)}  ${r.jsonKiB.toFixed(1).padStart(9)}  ${r.storedKiB.toFixed(1).padStart(10)}`,
  );
  process.stdout.write(
    `\nDecision records: writes and bytes per window or pass (at most ${MAX_RECORD_SUBJECTS} subjects a record; a pass deciding the same is written again after ${RECORD_REFRESH_MS / 60_000} min)\n` +
      `${'case'.padEnd(width)}  ${'writes'.padStart(6)}  ${'subjects'.padStart(8)}  ${'JSON KiB'.padStart(9)}  ${'stored KiB'.padStart(10)}\n` +
      lines.join('\n') +
      '\n',
  );
}
