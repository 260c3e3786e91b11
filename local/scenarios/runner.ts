// Plays one scenario on a running stack: records everything, shows the live view, and ends with the
// one-screen summary and the timeline picture written to the results folder.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalStack } from '../stack/local-stack.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { ActivityCall } from '../stack/definitions.js';
import { startLiveView } from '../view/live-view.js';
import { nodeClaimTimelines, type NodeClaimTimeline } from '../view/phases.js';
import { startRecorder, type Recorder } from '../view/recorder.js';
import { renderTimelineSvg } from '../view/timeline-svg.js';
import { kubeApis, type Scenario, type ScenarioOutcome } from './scenario.js';

export interface ScenarioReport {
  scenario: string;
  outcome: ScenarioOutcome;
  timelines: NodeClaimTimeline[];
  durationMs: number;
  /** The one-screen summary. */
  summaryText: string;
  svg: string;
  /** Files written, when a results directory was given. */
  files: string[];
  passed: boolean;
}

/** Forwards the host's activity calls to whichever recorder is current (the stack starts before them). */
export interface ActivityRelay {
  listener(call: ActivityCall): void;
  target: Recorder | undefined;
}

export function createActivityRelay(): ActivityRelay {
  const relay: ActivityRelay = {
    target: undefined,
    listener: (call) => relay.target?.recordActivity(call),
  };
  return relay;
}

export interface PlayOptions {
  relay: ActivityRelay;
  /** Show the live view on stdout. */
  live?: boolean;
  resultsDirectory?: string;
  signal?: AbortSignal;
  /** Lines that are not the live view (progress, notes when not live). */
  print?: (line: string) => void;
}

export async function playScenario(
  scenario: Scenario,
  stack: LocalStack,
  options: PlayOptions,
): Promise<ScenarioReport> {
  const print = options.print ?? (() => undefined);
  const runId = stack.runId;
  const namespace = `demo-${scenario.name}-${runId}`;
  const { core, apps } = kubeApis(stack.kubeconfigPath);
  if (scenario.usesPods) await core.createNamespace({ body: { metadata: { name: namespace } } });
  const recorder = startRecorder({
    kubeconfigPath: stack.kubeconfigPath,
    emulator: stack.emulator,
    labelSelector: `${RUN_LABEL}=${runId}`,
    nodeNameToken: runId,
    ...(scenario.usesPods ? { podNamespace: namespace } : {}),
  });
  options.relay.target = recorder;
  await recorder.synced();
  const notes: string[] = [];
  const note = (line: string): void => {
    const stamped = `[${((Date.now() - recorder.startedAt) / 1000).toFixed(1).padStart(5)} s] ${line}`;
    notes.push(stamped);
    if (!options.live) print(stamped);
  };
  const view = options.live
    ? startLiveView({
        title: `${scenario.name} — ${scenario.title} (speed ×${stack.timings.speed})`,
        recorder,
        vms: () => stack.emulator.controls.vms().filter((vm) => vm.resourceGroup === stack.resourceGroup),
        notes: () => notes,
      })
    : undefined;

  const started = Date.now();
  let outcome: ScenarioOutcome;
  try {
    outcome = await scenario.play({
      stack,
      recorder,
      core,
      apps,
      runId,
      namespace,
      note,
      signal: options.signal ?? new AbortController().signal,
      ...(options.resultsDirectory ? { resultsDirectory: options.resultsDirectory } : {}),
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    // A scenario that could not finish still gets its summary and timeline: they show where it stopped.
    outcome = {
      invariants: [
        {
          name: 'the scenario ran to the end',
          holds: false,
          detail: error instanceof Error ? error.message : String(error),
        },
      ],
      summary: ['the scenario stopped early; the timeline shows how far each NodeClaim got'],
      marks: [],
      figures: {},
    };
  } finally {
    view?.stop();
    recorder.stop();
    options.relay.target = undefined;
    if (scenario.usesPods) await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
  const end = Date.now();
  const timelines = nodeClaimTimelines(recorder.history.nodeClaims, end);
  const passed = outcome.invariants.every((invariant) => invariant.holds);
  const svg = renderTimelineSvg({
    title: `${scenario.name}: every NodeClaim's phases`,
    subtitle: `speed ×${stack.timings.speed}, VM creation ${stack.timings.vmCreateMs} ms, poll ${stack.timings.pollIntervalSeconds} s; ${passed ? 'all invariants hold' : 'AN INVARIANT FAILED'}`,
    start: started,
    end,
    rows: timelines,
    marks: outcome.marks,
  });
  const summaryText = formatSummary(scenario, outcome, end - started, passed);
  const files: string[] = [];
  if (options.resultsDirectory) {
    await mkdir(options.resultsDirectory, { recursive: true });
    const base = join(options.resultsDirectory, scenario.name);
    if (outcome.picture) {
      await writeFile(`${base}.svg`, outcome.picture);
      await writeFile(`${base}-nodeclaims.svg`, svg);
      files.push(`${base}-nodeclaims.svg`);
    } else await writeFile(`${base}.svg`, svg);
    await writeFile(`${base}.txt`, summaryText + '\n');
    await writeFile(
      `${base}.json`,
      JSON.stringify(
        {
          scenario: scenario.name,
          passed,
          durationMs: end - started,
          timings: stack.timings,
          invariants: outcome.invariants,
          summary: outcome.summary,
          marks: outcome.marks,
          figures: outcome.figures,
          ...outcome.data,
          timelines,
        },
        null,
        2,
      ),
    );
    files.unshift(`${base}.svg`, `${base}.txt`, `${base}.json`);
  }
  return {
    scenario: scenario.name,
    outcome,
    timelines,
    durationMs: end - started,
    summaryText,
    svg,
    files,
    passed,
  };
}

function formatSummary(
  scenario: Scenario,
  outcome: ScenarioOutcome,
  durationMs: number,
  passed: boolean,
): string {
  const lines = [
    `━━ ${scenario.name}: ${passed ? 'PASSED' : 'FAILED'} in ${(durationMs / 1000).toFixed(1)} s ━━`,
    scenario.title,
    '',
    ...outcome.summary,
    '',
    'invariants:',
    ...outcome.invariants.map((i) => `  ${i.holds ? '✔' : '✘'} ${i.name}\n      ${i.detail}`),
  ];
  return lines.join('\n');
}
