// The answers to "why" built from hand-made decision records: a pod excluded by several NodePools for
// several causes that is placed after waiting, a recreated pod whose history is not its predecessor's, a
// node kept by its budget and then disrupted, a NodePool's counts; and explainSubject's bounded reads.
// The examples in docs/explain.md are these records' answers, so the page cannot drift from the output.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import type {
  CandidateDecision,
  DecisionRecord,
  DisruptionRecord,
  ProvisioningRecord,
} from '../../shared/decisions/explain/decision-record.js';
import {
  explainAnswer,
  renderAnswer,
  type NodeAnswer,
  type NodePoolAnswer,
  type PodAnswer,
} from '../../shared/decisions/explain/explain-answer.js';
import {
  EXPLAIN_DISRUPTION_RECORDS,
  EXPLAIN_PROVISIONING_RECORDS,
  explainSubject,
} from '../../shared/lifecycle/explain/explain-subject.js';

const at = (minute: number): string => `2026-03-01T12:${String(minute).padStart(2, '0')}:00.000Z`;

function waitingWindow(minute: number, uid = 'uid-web'): ProvisioningRecord {
  return {
    kind: 'provisioning',
    id: `w${minute}`,
    at: at(minute),
    pods: [
      {
        pod: 'shop/web-0',
        uid,
        excluded: [
          { nodePool: 'gpu', cause: 'Taint', message: 'taint nvidia.com/gpu=true:NoSchedule not tolerated' },
          { nodePool: 'general', cause: 'Limit', message: 'would exceed limits cpu=64 (63 in use)' },
        ],
        existingNodesFull: 3,
      },
      {
        pod: 'shop/api-0',
        uid: 'uid-api',
        excluded: [
          { nodePool: 'general', cause: 'Limit', message: 'would exceed limits cpu=64 (60 in use)' },
        ],
      },
    ],
    launches: [],
  };
}

const placedWindow: ProvisioningRecord = {
  kind: 'provisioning',
  id: 'w9',
  at: at(9),
  pods: [
    { pod: 'shop/web-0', uid: 'uid-web', placed: { kind: 'NodeClaim', name: 'general-abc12', new: true } },
    {
      pod: 'shop/api-0',
      uid: 'uid-api',
      excluded: [{ nodePool: 'general', cause: 'Resources', message: 'no instance type has 96 cpu' }],
    },
  ],
  launches: [
    {
      nodeClaim: 'general-abc12',
      nodePool: 'general',
      instanceTypes: ['Standard_D4s_v5', 'Standard_D4as_v5'],
      zones: ['westeurope-1'],
      capacityTypes: ['on-demand'],
      pricePerHour: 0.192,
      pods: ['shop/web-0'],
    },
  ],
};

// Newest first: placed at :09 after waiting at :05, :06, :07; an older window at :02 placed it (an earlier
// run that ended), and :03 is a window that did not consider it at all.
const provisioning: ProvisioningRecord[] = [
  placedWindow,
  waitingWindow(7),
  waitingWindow(6),
  waitingWindow(5),
  {
    kind: 'provisioning',
    id: 'w3',
    at: at(3),
    pods: [
      { pod: 'batch/job-1', uid: 'uid-job', placed: { kind: 'Node', name: 'aks-general-1', new: false } },
    ],
    launches: [],
  },
  {
    kind: 'provisioning',
    id: 'w2',
    at: at(2),
    pods: [
      { pod: 'shop/web-0', uid: 'uid-web', placed: { kind: 'Node', name: 'aks-general-0', new: false } },
    ],
    launches: [],
  },
];

function candidate(
  overrides: Partial<CandidateDecision> & Pick<CandidateDecision, 'method' | 'cause'>,
): CandidateDecision {
  return {
    nodeClaim: 'general-old01',
    node: 'aks-general-old01',
    decision: overrides.cause === 'Disrupted' ? 'disrupt' : 'keep',
    message: `${overrides.cause} message`,
    ...overrides,
  };
}

const keptByBudget: DisruptionRecord = {
  kind: 'disruption',
  id: `general-${at(4)}`,
  at: at(4),
  nodePool: 'general',
  candidates: [
    candidate({ method: 'emptiness', cause: 'NotApplicable', message: 'the node has pods' }),
    candidate({
      method: 'single-node-consolidation',
      cause: 'Budget',
      message: 'budget for Underutilized allows 0 now (nodes: "0" in schedule 0 9 * * 1-5)',
    }),
    candidate({
      nodeClaim: 'general-old02',
      node: 'aks-general-old02',
      method: 'single-node-consolidation',
      cause: 'Budget',
      message: 'budget allows 0',
    }),
  ],
  commands: [],
};

const disrupting: DisruptionRecord = {
  kind: 'disruption',
  id: `general-${at(8)}`,
  at: at(8),
  nodePool: 'general',
  candidates: [
    candidate({ method: 'emptiness', cause: 'NotApplicable', message: 'the node has pods' }),
    candidate({
      method: 'single-node-consolidation',
      cause: 'Disrupted',
      message: 'replace with a cheaper node',
    }),
    candidate({
      nodeClaim: 'general-old02',
      node: 'aks-general-old02',
      method: 'single-node-consolidation',
      cause: 'PDB',
      message: 'pdb shop/api allows 0 evictions',
    }),
    candidate({
      nodeClaim: 'general-old03',
      node: 'aks-general-old03',
      method: 'drift',
      cause: 'DoNotDisrupt',
      message: 'karpenter.sh/do-not-disrupt on pod batch/job-1',
    }),
  ],
  commands: [
    {
      method: 'single-node-consolidation',
      reason: 'Underutilized',
      candidates: ['general-old01'],
      replacements: ['Standard_D2s_v5'],
      pricePerHourBefore: 0.384,
      pricePerHourAfter: 0.096,
      podsMoved: ['shop/web-1', 'shop/web-2'],
    },
  ],
};

const otherPool: DisruptionRecord = {
  kind: 'disruption',
  id: `gpu-${at(8)}`,
  at: at(8),
  nodePool: 'gpu',
  candidates: [
    candidate({
      nodeClaim: 'gpu-1',
      node: 'aks-gpu-1',
      method: 'emptiness',
      cause: 'ConsolidateAfter',
      message: 'consolidateAfter 10m not elapsed',
    }),
  ],
  commands: [],
};

const disruption: DisruptionRecord[] = [disrupting, otherPool, keptByBudget];
const all: DecisionRecord[] = [...provisioning, ...disruption];

describe('a pod', () => {
  test('placed after waiting: where, the run of windows it waited, the launch opened for it', () => {
    const answer = explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, all) as PodAnswer;
    expect(answer).toMatchObject({
      kind: 'pod',
      pod: 'shop/web-0',
      window: { id: 'w9', at: at(9) },
      placed: { kind: 'NodeClaim', name: 'general-abc12', new: true },
      excluded: [],
      waited: { windows: 3, since: at(5), until: at(7) },
      launch: {
        nodeClaim: 'general-abc12',
        nodePool: 'general',
        instanceTypes: ['Standard_D4s_v5', 'Standard_D4as_v5'],
        pricePerHour: 0.192,
      },
    });
    expect(answer.summary).toBe(
      `Placed on new NodeClaim general-abc12 after waiting 3 windows since ${at(5)}`,
    );
    expect(JSON.parse(JSON.stringify(answer))).toEqual(answer);
  });

  test('still waiting: per NodePool the cause and message, the windows in a row, no launch', () => {
    const answer = explainAnswer(
      { kind: 'pod', namespace: 'shop', name: 'web-0' },
      provisioning.slice(1),
    ) as PodAnswer;
    expect(answer.placed).toBeUndefined();
    expect(answer.excluded.map((exclusion) => [exclusion.nodePool, exclusion.cause])).toEqual([
      ['gpu', 'Taint'],
      ['general', 'Limit'],
    ]);
    expect(answer.existingNodesFull).toBe(3);
    expect(answer.waited).toEqual({ windows: 3, since: at(5), until: at(7) });
    expect(answer.launch).toBeUndefined();
    expect(answer.summary).toBe(`Not placed: Taint, Limit (2 NodePools), waiting 3 windows since ${at(5)}`);
    const text = renderAnswer(answer);
    expect(text).toContain(
      'Excluded:\n  Taint  gpu      taint nvidia.com/gpu=true:NoSchedule not tolerated\n  Limit  general  would exceed limits',
    );
    expect(text).toContain('Existing:  no room on 3 nodes');
  });

  test("a recreated pod (same name, new uid) does not inherit the old one's wait", () => {
    const records = [waitingWindow(8, 'uid-new'), ...provisioning.slice(1)];
    const answer = explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, records) as PodAnswer;
    expect(answer.uid).toBe('uid-new');
    expect(answer.waited).toEqual({ windows: 1, since: at(8), until: at(8) });
  });

  test('placed on an existing node without waiting', () => {
    const answer = explainAnswer({ kind: 'pod', namespace: 'batch', name: 'job-1' }, all) as PodAnswer;
    expect(answer.summary).toBe('Placed on existing Node aks-general-1');
    expect(answer.waited).toBeUndefined();
  });

  test('nothing recorded: undefined', () => {
    expect(explainAnswer({ kind: 'pod', namespace: 'shop', name: 'nope' }, all)).toBeUndefined();
    expect(explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, disruption)).toBeUndefined();
  });

  test('a record that left pods out is said so', () => {
    const records = [{ ...waitingWindow(7), omittedPods: 12 }];
    const answer = explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, records) as PodAnswer;
    expect(answer.omittedPods).toBe(true);
    expect(renderAnswer(answer)).toContain('left pods out');
  });
});

describe('a node', () => {
  test('kept by budget, then disrupted: per method the newest judgement, and the command', () => {
    const answer = explainAnswer({ kind: 'node', name: 'aks-general-old01' }, all) as NodeAnswer;
    expect(answer).toMatchObject({
      nodeClaim: 'general-old01',
      node: 'aks-general-old01',
      nodePool: 'general',
    });
    expect(
      answer.judgements.map((judgement) => [judgement.method, judgement.cause, judgement.pass.at]),
    ).toEqual([
      ['emptiness', 'NotApplicable', at(8)],
      ['single-node-consolidation', 'Disrupted', at(8)],
    ]);
    expect(answer.disruptedBy).toMatchObject({
      reason: 'Underutilized',
      pricePerHourBefore: 0.384,
      pricePerHourAfter: 0.096,
      podsMoved: ['shop/web-1', 'shop/web-2'],
    });
    expect(answer.summary).toBe(
      `Disrupted (Underutilized, single-node-consolidation) at ${at(8)}: $0.3840/h -> $0.0960/h, 2 pods moved`,
    );
    const text = renderAnswer(answer);
    expect(text).toContain('Node:      aks-general-old01 (NodeClaim general-old01)');
    expect(text).toContain('Price:         $0.3840/h -> $0.0960/h (-$0.2880/h)');
  });

  test('asked by NodeClaim name, before the pass that disrupted it: kept by its budget', () => {
    const answer = explainAnswer({ kind: 'node', name: 'general-old01' }, [keptByBudget]) as NodeAnswer;
    expect(answer.disruptedBy).toBeUndefined();
    expect(answer.judgements.map((judgement) => [judgement.cause, judgement.decision])).toEqual([
      ['NotApplicable', 'keep'],
      ['Budget', 'keep'],
    ]);
    expect(answer.summary).toBe(`Kept: Budget (2 methods, newest pass ${at(4)})`);
    const text = renderAnswer(answer);
    expect(text).toMatch(/Judged:\n {2}NotApplicable +keep +emptiness/);
    expect(text).toMatch(
      /\n {2}Budget +keep +single-node-consolidation +2026-03-01T12:04:00.000Z +budget for Underutilized/,
    );
  });

  test('after the command: disrupting (NotReady) keeps it disrupted; another cause later means it is back', () => {
    const pass = (minute: number, cause: 'NotReady' | 'Budget'): DisruptionRecord => ({
      kind: 'disruption',
      id: `general-${at(minute)}`,
      at: at(minute),
      nodePool: 'general',
      candidates: [candidate({ method: 'single-node-consolidation', cause, message: `${cause} now` })],
      commands: [],
    });
    const disrupting = explainAnswer({ kind: 'node', name: 'general-old01' }, [
      pass(9, 'NotReady'),
      ...disruption,
    ]);
    expect(disrupting?.summary).toMatch(/^Disrupted \(Underutilized/);
    const back = explainAnswer({ kind: 'node', name: 'general-old01' }, [pass(10, 'Budget'), ...disruption]);
    // Only the newest pass says where it stands (emptiness's judgement at :08 is context).
    expect(back?.summary).toBe(
      `Kept: Budget (1 method, newest pass ${at(10)}); disrupted before (Underutilized) at ${at(8)}`,
    );
  });

  test('nothing recorded: undefined', () => {
    expect(explainAnswer({ kind: 'node', name: 'aks-nope' }, all)).toBeUndefined();
  });
});

describe('a NodePool', () => {
  test('the newest pass: candidates per cause, the commands with their $/h; exclusions over the windows', () => {
    const answer = explainAnswer({ kind: 'nodepool', name: 'general' }, all) as NodePoolAnswer;
    expect(answer.pass).toMatchObject({ id: `general-${at(8)}`, candidates: 3, pricePerHourDelta: -0.288 });
    expect(answer.pass?.causes.map((entry) => [entry.cause, entry.count])).toEqual([
      ['Disrupted', 1],
      ['DoNotDisrupt', 1],
      ['NotApplicable', 1],
      ['PDB', 1],
    ]);
    expect(answer.provisioning).toMatchObject({
      windows: 6,
      since: at(2),
      until: at(9),
      launches: 1,
      launchPricePerHour: 0.192,
    });
    // web-0 and api-0 for Limit (counted once each over three windows), api-0 for Resources.
    expect(answer.provisioning.excluded.map((entry) => [entry.cause, entry.count, entry.example])).toEqual([
      ['Limit', 2, 'would exceed limits cpu=64 (63 in use)'],
      ['Resources', 1, 'no instance type has 96 cpu'],
    ]);
    expect(answer.summary).toBe(
      '1 command disrupting 1 node (-$0.2880/h); excluded pods in 6 windows, most for Limit (2 pods)',
    );
    const text = renderAnswer(answer);
    expect(text).toContain('Commands (-$0.2880/h):');
    expect(text).toContain('  Excluded pods:\n    Limit      2  would exceed limits cpu=64 (63 in use)');
  });

  test('known only from provisioning, or not at all', () => {
    const gpu = explainAnswer({ kind: 'nodepool', name: 'gpu' }, provisioning) as NodePoolAnswer;
    expect(gpu.pass).toBeUndefined();
    expect(gpu.provisioning.excluded).toEqual([
      { cause: 'Taint', count: 1, example: 'taint nvidia.com/gpu=true:NoSchedule not tolerated' },
    ]);
    expect(explainAnswer({ kind: 'nodepool', name: 'spot' }, all)).toBeUndefined();
  });
});

describe('docs/explain.md', () => {
  test('its example answers are these records rendered', () => {
    const docs = readFileSync(new URL('../../docs/explain.md', import.meta.url), 'utf8');
    const examples = [
      explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, provisioning.slice(1)),
      explainAnswer({ kind: 'pod', namespace: 'shop', name: 'web-0' }, all),
      explainAnswer({ kind: 'node', name: 'general-old01' }, [keptByBudget]),
      explainAnswer({ kind: 'node', name: 'aks-general-old01' }, all),
      explainAnswer({ kind: 'nodepool', name: 'general' }, all),
    ];
    for (const example of examples) expect(docs).toContain(renderAnswer(example!));
  });
});

describe('explainSubject', () => {
  test('reads a bounded number of records of the kinds the subject needs', async () => {
    const asked: [string, number][] = [];
    const records = {
      recent: async (kind: DecisionRecord['kind'], limit: number): Promise<DecisionRecord[]> => {
        asked.push([kind, limit]);
        return kind === 'provisioning' ? provisioning : disruption;
      },
    };
    const pod = await explainSubject(records, { kind: 'pod', namespace: 'shop', name: 'web-0' });
    expect(pod?.summary).toContain('Placed on new NodeClaim general-abc12');
    expect(asked).toEqual([['provisioning', EXPLAIN_PROVISIONING_RECORDS]]);

    asked.length = 0;
    expect((await explainSubject(records, { kind: 'node', name: 'general-old01' }))?.kind).toBe('node');
    expect(asked).toEqual([['disruption', EXPLAIN_DISRUPTION_RECORDS]]);

    asked.length = 0;
    expect((await explainSubject(records, { kind: 'nodepool', name: 'general' }))?.kind).toBe('nodepool');
    expect(asked.map(([kind]) => kind).sort()).toEqual(['disruption', 'provisioning']);

    expect(await explainSubject(records, { kind: 'node', name: 'missing' })).toBeUndefined();
  });
});
