// A user asks "why is my pod pending?", "why is this node still here?", "what is this NodePool doing?";
// the decision records already hold the answer, spread over many windows and passes. This turns the
// recent records into one answer for one subject: the newest decision about it, the cause first, and the
// context that makes the cause readable (how long a pod has waited, what a command saved). Pure, so the
// HTTP endpoint, the CLI's tests and anything else can build the same answer from the same records.
import type {
  CandidateCause,
  CandidateDecision,
  CommandDecision,
  DecisionRecord,
  DisruptionRecord,
  ExclusionCause,
  PodDecision,
  PodExclusion,
  ProvisioningRecord,
} from './decision-record.js';

/** What a user can ask about. */
export type ExplainSubject =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'node'; name: string }
  | { kind: 'nodepool'; name: string };

/** Which window or pass an answer's part comes from. */
export interface RecordRef {
  id: string;
  at: string;
}

export interface PodAnswer {
  kind: 'pod';
  /** `namespace/name`. */
  pod: string;
  uid: string;
  summary: string;
  /** The newest window that considered the pod. */
  window: RecordRef;
  placed?: { kind: 'Node' | 'NodeClaim'; name: string; new: boolean };
  /** Per NodePool, why it could not take the pod in that window (empty when placed). */
  excluded: PodExclusion[];
  /** How many existing nodes were considered and had no room, when none had. */
  existingNodesFull?: number;
  /**
   * The consecutive windows (among those that considered this pod, ending at the newest) in which it was
   * placed nowhere; when it is placed now, the run just before. Absent when it never waited.
   */
  waited?: { windows: number; since: string; until: string };
  /** The newest NodeClaim a window opened for this pod. */
  launch?: {
    window: RecordRef;
    nodeClaim: string;
    nodePool: string;
    instanceTypes: string[];
    zones?: string[];
    capacityTypes?: string[];
    pricePerHour: number;
  };
  /** Windows read, and whether any of them left pods out (the pod may have been among them). */
  windowsRead: number;
  omittedPods: boolean;
}

export interface NodeJudgement {
  pass: RecordRef;
  method: string;
  decision: 'disrupt' | 'keep';
  cause: CandidateCause;
  message: string;
}

/** A command as its pass recorded it, and which pass that was. */
export interface CommandAnswer extends CommandDecision {
  pass: RecordRef;
  /** Moved pods left out of `podsMoved` because the caller may not list pods in their namespaces. */
  podsMovedHidden?: number;
}

export interface NodeAnswer {
  kind: 'node';
  /** The name asked about (a Node's or a NodeClaim's). */
  name: string;
  nodeClaim: string;
  node?: string;
  nodePool: string;
  summary: string;
  /** Per method, the newest pass that judged the node; newest first. */
  judgements: NodeJudgement[];
  /** The newest command that disrupted it. */
  disruptedBy?: CommandAnswer;
}

export interface CauseCount<Cause extends string> {
  cause: Cause;
  count: number;
  /** One message of this cause, the newest, so the count has a sentence beside it. */
  example: string;
}

export interface NodePoolAnswer {
  kind: 'nodepool';
  name: string;
  summary: string;
  /** The newest disruption pass of the NodePool. */
  pass?: RecordRef & {
    candidates: number;
    omittedCandidates?: number;
    /** Distinct candidates per cause, most first (a candidate judged by several methods counts per cause). */
    causes: CauseCount<CandidateCause>[];
    commands: CommandAnswer[];
    /** Sum over the commands of $/h after minus before (negative: a saving). */
    pricePerHourDelta: number;
  };
  /** Over the provisioning windows read. */
  provisioning: {
    windows: number;
    since?: string;
    until?: string;
    /** Distinct pods the NodePool excluded, per cause, most first. */
    excluded: CauseCount<ExclusionCause>[];
    /** NodeClaims it launched, and their cheapest offerings' $/h summed. */
    launches: number;
    launchPricePerHour: number;
  };
}

export type ExplainAnswer = PodAnswer | NodeAnswer | NodePoolAnswer;

/**
 * The answer for `subject` from `records`, each kind newest first (the two kinds may be interleaved).
 * Undefined when no record mentions the subject.
 */
export function explainAnswer(
  subject: ExplainSubject,
  records: readonly DecisionRecord[],
): ExplainAnswer | undefined {
  const provisioning = records.filter(
    (record): record is ProvisioningRecord => record.kind === 'provisioning',
  );
  const disruption = records.filter((record): record is DisruptionRecord => record.kind === 'disruption');
  switch (subject.kind) {
    case 'pod':
      return podAnswer(`${subject.namespace}/${subject.name}`, provisioning);
    case 'node':
      return nodeAnswer(subject.name, disruption);
    case 'nodepool':
      return nodePoolAnswer(subject.name, provisioning, disruption);
  }
}

function ref(record: DecisionRecord): RecordRef {
  return { id: record.id, at: record.at };
}

function podAnswer(pod: string, windows: readonly ProvisioningRecord[]): PodAnswer | undefined {
  const considered: { window: ProvisioningRecord; decision: PodDecision }[] = [];
  for (const window of windows) {
    const decision = window.pods.find((candidate) => candidate.pod === pod);
    if (decision) considered.push({ window, decision });
  }
  const newest = considered[0];
  if (!newest) return undefined;
  const { window, decision } = newest;
  // The same name with another uid is another pod (recreated by its controller): its history is not
  // this one's.
  const mine = considered.filter((entry) => entry.decision.uid === decision.uid);

  let run = mine;
  if (decision.placed) run = run.slice(1);
  const end = run.findIndex((entry) => entry.decision.placed !== undefined);
  if (end >= 0) run = run.slice(0, end);
  const waited =
    run.length > 0
      ? { windows: run.length, since: run[run.length - 1]!.window.at, until: run[0]!.window.at }
      : undefined;

  let launch: PodAnswer['launch'];
  for (const entry of mine) {
    const opened = entry.window.launches.find((candidate) => candidate.pods.includes(pod));
    if (!opened) continue;
    launch = {
      window: ref(entry.window),
      nodeClaim: opened.nodeClaim,
      nodePool: opened.nodePool,
      instanceTypes: [...opened.instanceTypes],
      ...(opened.zones ? { zones: [...opened.zones] } : {}),
      ...(opened.capacityTypes ? { capacityTypes: [...opened.capacityTypes] } : {}),
      pricePerHour: opened.pricePerHour,
    };
    break;
  }

  const excluded = decision.placed ? [] : (decision.excluded ?? []).map((exclusion) => ({ ...exclusion }));
  const answer: PodAnswer = {
    kind: 'pod',
    pod,
    uid: decision.uid,
    summary: '',
    window: ref(window),
    ...(decision.placed ? { placed: { ...decision.placed } } : {}),
    excluded,
    ...(decision.existingNodesFull !== undefined ? { existingNodesFull: decision.existingNodesFull } : {}),
    ...(waited ? { waited } : {}),
    ...(launch ? { launch } : {}),
    windowsRead: windows.length,
    omittedPods: windows.some((record) => (record.omittedPods ?? 0) > 0),
  };
  answer.summary = podSummary(answer);
  return answer;
}

function podSummary(answer: PodAnswer): string {
  const waitedFor = answer.waited
    ? ` after waiting ${plural(answer.waited.windows, 'window')} since ${answer.waited.since}`
    : '';
  if (answer.placed) {
    const where = answer.placed.new
      ? `new ${answer.placed.kind} ${answer.placed.name}`
      : `existing ${answer.placed.kind} ${answer.placed.name}`;
    return `Placed on ${where}${waitedFor}`;
  }
  const causes = distinct(answer.excluded.map((exclusion) => exclusion.cause));
  const pools = answer.excluded.length;
  const why = causes.length > 0 ? causes.join(', ') : 'no NodePool asked';
  const waiting = answer.waited
    ? `, waiting ${plural(answer.waited.windows, 'window')} since ${answer.waited.since}`
    : '';
  return `Not placed: ${why} (${plural(pools, 'NodePool')})${waiting}`;
}

function matchesNode(candidate: CandidateDecision, name: string): boolean {
  return candidate.nodeClaim === name || candidate.node === name;
}

function nodeAnswer(name: string, passes: readonly DisruptionRecord[]): NodeAnswer | undefined {
  const judgements: NodeJudgement[] = [];
  const methods = new Set<string>();
  let identity: CandidateDecision | undefined;
  let identityPool: string | undefined;
  for (const pass of passes) {
    for (const candidate of pass.candidates) {
      if (!matchesNode(candidate, name)) continue;
      if (!identity) {
        identity = candidate;
        identityPool = pass.nodePool;
      }
      if (methods.has(candidate.method)) continue;
      methods.add(candidate.method);
      judgements.push({
        pass: ref(pass),
        method: candidate.method,
        decision: candidate.decision,
        cause: candidate.cause,
        message: candidate.message,
      });
    }
  }

  let disruptedBy: CommandAnswer | undefined;
  let commandPool: string | undefined;
  const names = new Set([name, ...(identity ? [identity.nodeClaim] : [])]);
  for (const pass of passes) {
    const command = pass.commands.find((candidate) => candidate.candidates.some((c) => names.has(c)));
    if (command) {
      disruptedBy = commandAnswer(pass, command);
      commandPool = pass.nodePool;
      break;
    }
  }
  if (!identity && !disruptedBy) return undefined;

  const answer: NodeAnswer = {
    kind: 'node',
    name,
    nodeClaim: identity?.nodeClaim ?? name,
    ...(identity?.node ? { node: identity.node } : {}),
    nodePool: identityPool ?? commandPool ?? '',
    summary: '',
    judgements,
    ...(disruptedBy ? { disruptedBy } : {}),
  };
  answer.summary = nodeSummary(answer);
  return answer;
}

function commandAnswer(pass: DisruptionRecord, command: CommandDecision): CommandAnswer {
  return {
    pass: ref(pass),
    method: command.method,
    reason: command.reason,
    candidates: [...command.candidates],
    replacements: [...command.replacements],
    pricePerHourBefore: command.pricePerHourBefore,
    pricePerHourAfter: command.pricePerHourAfter,
    podsMoved: [...command.podsMoved],
  };
}

function nodeSummary(answer: NodeAnswer): string {
  const command = answer.disruptedBy;
  // Once a command disrupts a node, later passes see it disrupting (NotReady): the command stays the
  // latest word on it until a later pass judges it for another cause (the command did not go through).
  const since = command
    ? answer.judgements.filter(
        (judgement) => judgement.pass.at > command.pass.at && judgement.cause !== 'NotReady',
      )
    : [];
  if (command && since.length === 0) {
    return `Disrupted (${command.reason}, ${command.method}) at ${command.pass.at}: ${dollars(
      command.pricePerHourBefore,
    )} -> ${dollars(command.pricePerHourAfter)}, ${plural(command.podsMoved.length, 'pod')} moved`;
  }
  const newest = answer.judgements[0];
  if (!newest) return 'No pass judged it';
  // The newest pass's judgements say where the node stands now; older ones are context.
  const current = answer.judgements.filter((judgement) => judgement.pass.id === newest.pass.id);
  const before = command ? `; disrupted before (${command.reason}) at ${command.pass.at}` : '';
  const disrupting = current.find((judgement) => judgement.decision === 'disrupt');
  if (disrupting) return `Chosen for disruption by ${disrupting.method} at ${disrupting.pass.at}${before}`;
  const causes = distinct(
    current.filter((judgement) => judgement.cause !== 'NotApplicable').map((judgement) => judgement.cause),
  );
  return `Kept: ${causes.length > 0 ? causes.join(', ') : 'NotApplicable'} (${plural(
    current.length,
    'method',
  )}, newest pass ${newest.pass.at})${before}`;
}

function nodePoolAnswer(
  name: string,
  windows: readonly ProvisioningRecord[],
  passes: readonly DisruptionRecord[],
): NodePoolAnswer | undefined {
  const newestPass = passes.find((pass) => pass.nodePool === name);

  const exclusionPods = new Map<ExclusionCause, { pods: Set<string>; example: string }>();
  let launches = 0;
  let launchPricePerHour = 0;
  let mentioned = false;
  for (const window of windows) {
    for (const pod of window.pods) {
      for (const exclusion of pod.excluded ?? []) {
        if (exclusion.nodePool !== name) continue;
        mentioned = true;
        const entry = exclusionPods.get(exclusion.cause);
        // Windows are newest first: the first message seen is the newest.
        if (entry) entry.pods.add(pod.uid);
        else exclusionPods.set(exclusion.cause, { pods: new Set([pod.uid]), example: exclusion.message });
      }
    }
    for (const launch of window.launches) {
      if (launch.nodePool !== name) continue;
      mentioned = true;
      launches += 1;
      launchPricePerHour += launch.pricePerHour;
    }
  }
  if (!newestPass && !mentioned) return undefined;

  let pass: NodePoolAnswer['pass'];
  if (newestPass) {
    const byCause = new Map<CandidateCause, { nodeClaims: Set<string>; example: string }>();
    for (const candidate of newestPass.candidates) {
      const entry = byCause.get(candidate.cause);
      if (entry) entry.nodeClaims.add(candidate.nodeClaim);
      else
        byCause.set(candidate.cause, {
          nodeClaims: new Set([candidate.nodeClaim]),
          example: candidate.message,
        });
    }
    const commands = newestPass.commands.map((command) => commandAnswer(newestPass, command));
    pass = {
      ...ref(newestPass),
      candidates: new Set(newestPass.candidates.map((candidate) => candidate.nodeClaim)).size,
      ...(newestPass.omittedCandidates ? { omittedCandidates: newestPass.omittedCandidates } : {}),
      causes: counted(
        [...byCause].map(([cause, entry]) => ({
          cause,
          count: entry.nodeClaims.size,
          example: entry.example,
        })),
      ),
      commands,
      pricePerHourDelta: round(
        commands.reduce((sum, command) => sum + command.pricePerHourAfter - command.pricePerHourBefore, 0),
      ),
    };
  }

  const answer: NodePoolAnswer = {
    kind: 'nodepool',
    name,
    summary: '',
    ...(pass ? { pass } : {}),
    provisioning: {
      windows: windows.length,
      ...(windows.length > 0 ? { since: windows[windows.length - 1]!.at, until: windows[0]!.at } : {}),
      excluded: counted(
        [...exclusionPods].map(([cause, entry]) => ({
          cause,
          count: entry.pods.size,
          example: entry.example,
        })),
      ),
      launches,
      launchPricePerHour: round(launchPricePerHour),
    },
  };
  answer.summary = nodePoolSummary(answer);
  return answer;
}

function nodePoolSummary(answer: NodePoolAnswer): string {
  const parts: string[] = [];
  if (answer.pass) {
    const disrupted = answer.pass.causes.find((entry) => entry.cause === 'Disrupted')?.count ?? 0;
    const commands = answer.pass.commands.length;
    parts.push(
      commands > 0
        ? `${plural(commands, 'command')} disrupting ${plural(disrupted, 'node')} (${signedDollars(
            answer.pass.pricePerHourDelta,
          )})`
        : `nothing disrupted of ${plural(answer.pass.candidates, 'candidate')}`,
    );
  }
  const excluded = answer.provisioning.excluded;
  const top = excluded[0];
  parts.push(
    top
      ? `excluded pods in ${plural(answer.provisioning.windows, 'window')}, most for ${top.cause} (${plural(top.count, 'pod')})`
      : `${plural(answer.provisioning.launches, 'launch', 'launches')} in ${plural(answer.provisioning.windows, 'window')}`,
  );
  return parts.join('; ').replace(/^./, (first) => first.toUpperCase());
}

function counted<Cause extends string>(entries: CauseCount<Cause>[]): CauseCount<Cause>[] {
  return entries.sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function plural(count: number, singular: string, many = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : many}`;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function dollars(value: number): string {
  return `$${value.toFixed(4)}/h`;
}

function signedDollars(value: number): string {
  return `${value > 0 ? '+' : value < 0 ? '-' : '±'}${dollars(Math.abs(value))}`;
}

/** The answer as a terminal shows it: the summary, then short aligned lines, the cause first. */
export function renderAnswer(answer: ExplainAnswer): string {
  switch (answer.kind) {
    case 'pod':
      return renderPod(answer);
    case 'node':
      return renderNode(answer);
    case 'nodepool':
      return renderNodePool(answer);
  }
}

/** `Label:` padded so the values line up, as kubectl describe does. */
function fields(rows: readonly (readonly [string, string] | undefined)[], indent = ''): string[] {
  const present = rows.filter((row): row is readonly [string, string] => row !== undefined);
  const width = Math.max(0, ...present.map(([label]) => label.length + 1));
  return present.map(([label, value]) => `${indent}${`${label}:`.padEnd(width)}  ${value}`.trimEnd());
}

/** Rows of columns, each column as wide as its widest cell. */
function table(rows: readonly (readonly string[])[], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) =>
    `${indent}${row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ')}`.trimEnd(),
  );
}

function renderPod(answer: PodAnswer): string {
  const lines = [
    ...fields([
      ['Pod', answer.pod],
      ['Summary', answer.summary],
      ['Window', `${answer.window.at}  (${answer.window.id})`],
      answer.placed
        ? [
            'Placed',
            `${answer.placed.kind} ${answer.placed.name} (${answer.placed.new ? 'new' : 'existing'})`,
          ]
        : undefined,
      answer.waited
        ? [
            answer.placed ? 'Waited' : 'Waiting',
            `${plural(answer.waited.windows, 'window')}, ${answer.waited.since} .. ${answer.waited.until}`,
          ]
        : undefined,
      answer.existingNodesFull !== undefined
        ? ['Existing', `no room on ${plural(answer.existingNodesFull, 'node')}`]
        : undefined,
    ]),
  ];
  if (!answer.placed) {
    lines.push('Excluded:');
    lines.push(
      ...(answer.excluded.length > 0
        ? table(answer.excluded.map((exclusion) => [exclusion.cause, exclusion.nodePool, exclusion.message]))
        : ['  (no NodePool was asked)']),
    );
  }
  if (answer.launch) {
    const launch = answer.launch;
    lines.push('Launch:');
    lines.push(
      ...fields(
        [
          ['NodeClaim', `${launch.nodeClaim} (NodePool ${launch.nodePool}) at ${launch.window.at}`],
          ['Instance types', launch.instanceTypes.join(', ')],
          launch.zones ? ['Zones', launch.zones.join(', ')] : undefined,
          launch.capacityTypes ? ['Capacity types', launch.capacityTypes.join(', ')] : undefined,
          ['Price', dollars(launch.pricePerHour)],
        ],
        '  ',
      ),
    );
  }
  if (answer.omittedPods) {
    lines.push(
      `Note: some of the ${plural(answer.windowsRead, 'window')} read left pods out (too many to record).`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function renderCommand(command: CommandAnswer, indent: string): string[] {
  return fields(
    [
      ['Reason', `${command.reason} (${command.method}) at ${command.pass.at}`],
      ['Candidates', command.candidates.join(', ')],
      ['Replacements', command.replacements.length > 0 ? command.replacements.join(', ') : '(none: delete)'],
      [
        'Price',
        `${dollars(command.pricePerHourBefore)} -> ${dollars(command.pricePerHourAfter)} (${signedDollars(
          round(command.pricePerHourAfter - command.pricePerHourBefore),
        )})`,
      ],
      ['Pods moved', movedPods(command)],
    ],
    indent,
  );
}

function renderNode(answer: NodeAnswer): string {
  const lines = fields([
    [
      'Node',
      answer.node && answer.node !== answer.nodeClaim
        ? `${answer.node} (NodeClaim ${answer.nodeClaim})`
        : answer.nodeClaim,
    ],
    ['NodePool', answer.nodePool],
    ['Summary', answer.summary],
  ]);
  if (answer.judgements.length > 0) {
    lines.push('Judged:');
    lines.push(
      ...table(
        answer.judgements.map((judgement) => [
          judgement.cause,
          judgement.decision,
          judgement.method,
          judgement.pass.at,
          judgement.message,
        ]),
      ),
    );
  }
  if (answer.disruptedBy) {
    lines.push('Disrupted by:');
    lines.push(...renderCommand(answer.disruptedBy, '  '));
  }
  return `${lines.join('\n')}\n`;
}

function renderNodePool(answer: NodePoolAnswer): string {
  const lines = fields([
    ['NodePool', answer.name],
    ['Summary', answer.summary],
  ]);
  const pass = answer.pass;
  if (pass) {
    lines.push(
      `Disruption (newest pass ${pass.at}, ${plural(pass.candidates, 'candidate')}${
        pass.omittedCandidates ? `, ${pass.omittedCandidates} more not recorded` : ''
      }):`,
    );
    lines.push(...table(pass.causes.map((entry) => [entry.cause, String(entry.count), entry.example])));
    if (pass.commands.length > 0) {
      lines.push(`Commands (${signedDollars(pass.pricePerHourDelta)}):`);
      for (const command of pass.commands) lines.push(...renderCommand(command, '  '), '');
      if (lines[lines.length - 1] === '') lines.pop();
    }
  }
  const provisioning = answer.provisioning;
  lines.push(
    `Provisioning (${plural(provisioning.windows, 'window')}${
      provisioning.since ? `, ${provisioning.since} .. ${provisioning.until}` : ''
    }):`,
  );
  lines.push(
    ...fields(
      [
        [
          'Launched',
          `${plural(provisioning.launches, 'NodeClaim')} (${dollars(provisioning.launchPricePerHour)})`,
        ],
      ],
      '  ',
    ),
  );
  if (provisioning.excluded.length > 0) {
    lines.push('  Excluded pods:');
    lines.push(
      ...table(
        provisioning.excluded.map((entry) => [entry.cause, String(entry.count), entry.example]),
        '    ',
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

function movedPods(command: CommandAnswer): string {
  const hidden = command.podsMovedHidden ?? 0;
  const total = command.podsMoved.length + hidden;
  if (total === 0) return '0';
  const named = command.podsMoved.join(', ');
  const more = hidden > 0 ? `${named ? ' ' : ''}(${hidden} in namespaces you may not list pods in)` : '';
  return `${total}: ${named}${more}`;
}

const commandsOf = (answer: ExplainAnswer): CommandAnswer[] =>
  answer.kind === 'node'
    ? answer.disruptedBy
      ? [answer.disruptedBy]
      : []
    : answer.kind === 'nodepool'
      ? (answer.pass?.commands ?? [])
      : [];

const namespaceOf = (pod: string): string => pod.slice(0, Math.max(0, pod.indexOf('/')));

/** The namespaces of the pods an answer names (those its commands moved), sorted. */
export function podNamespacesOf(answer: ExplainAnswer): string[] {
  const namespaces = new Set<string>();
  for (const command of commandsOf(answer))
    for (const pod of command.podsMoved) namespaces.add(namespaceOf(pod));
  return [...namespaces].sort();
}

/**
 * The answer naming only the moved pods of `visible` namespaces: a node's or a NodePool's answer is for
 * whoever may get the node or the NodePool, and the pods on it may be anyone's. The others are counted.
 */
export function withVisiblePods(answer: ExplainAnswer, visible: ReadonlySet<string>): ExplainAnswer {
  const redact = (command: CommandAnswer): CommandAnswer => {
    const podsMoved = command.podsMoved.filter((pod) => visible.has(namespaceOf(pod)));
    const hidden = command.podsMoved.length - podsMoved.length + (command.podsMovedHidden ?? 0);
    return { ...command, podsMoved, ...(hidden > 0 && { podsMovedHidden: hidden }) };
  };
  if (answer.kind === 'node')
    return answer.disruptedBy ? { ...answer, disruptedBy: redact(answer.disruptedBy) } : answer;
  if (answer.kind === 'nodepool' && answer.pass)
    return { ...answer, pass: { ...answer.pass, commands: answer.pass.commands.map(redact) } };
  return answer;
}
