// The day's figures beside their goals (part of `npm run bench`): pending → Running p99, cost ÷ the lower
// bound of the requests averaged over the day, and disruptions per node-day. A day takes minutes of wall
// time, so the bench does not play one: it reads the newest results/*/day.json that `npm start --
// --scenario day` (or DAY_RESULTS=<file>) left, and says which run the figures come from.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DAY_GOALS } from '../../local/scenarios/day/figures.js';

const resultsRoot = fileURLToPath(new URL('../../results/', import.meta.url));

interface DayResult {
  passed: boolean;
  figures: Record<string, number | string>;
}

async function newestDayResult(): Promise<string | undefined> {
  if (process.env.DAY_RESULTS) return process.env.DAY_RESULTS;
  const runs = await readdir(resultsRoot).catch(() => [] as string[]);
  let newest: { path: string; at: number } | undefined;
  for (const run of runs) {
    const path = join(resultsRoot, run, 'day.json');
    const info = await stat(path).catch(() => undefined);
    if (info && (!newest || info.mtimeMs > newest.at)) newest = { path, at: info.mtimeMs };
  }
  return newest?.path;
}

export async function runDayBench(): Promise<void> {
  console.log('\n== a day in the life (the newest recorded day; the bench does not play one)');
  const path = await newestDayResult();
  if (!path) {
    console.log('  no results/*/day.json yet: run `npm start -- --scenario day` first (about 12 minutes)');
    return;
  }
  const day = JSON.parse(await readFile(path, 'utf8')) as DayResult;
  const f = day.figures;
  const number = (key: string) => Number(f[key]);
  console.log(
    `  from ${relative(process.cwd(), path)}: seed ${f.seed}, ${f.dayMinutes} min for 24 h at speed ×${f.speed}, ` +
      `${day.passed ? 'every invariant held' : 'AN INVARIANT FAILED'}`,
  );
  const rows: [string, string, string, boolean][] = [
    [
      'pending → Running p99',
      `${number('pendingP99Seconds')} s (p50 ${number('pendingP50Seconds')} s, p95 ${number('pendingP95Seconds')} s, ${number('pods')} pods)`,
      `≤ ${number('pendingBoundSeconds')} s, the bound the day checks`,
      number('pendingP99Seconds') <= number('pendingBoundSeconds'),
    ],
    [
      'cost ÷ lower bound, averaged over the day',
      `${number('costOverLowerBound')}×`,
      DAY_GOALS.costOverLowerBound.goal,
      number('costOverLowerBound') <= DAY_GOALS.costOverLowerBound.limit,
    ],
    [
      'disruptions per node-day',
      `${number('disruptionsPerNodeDay')} (${number('disruptions')} over ${number('nodeDays')} node-days)`,
      DAY_GOALS.disruptionsPerNodeDay.goal,
      number('disruptionsPerNodeDay') <= DAY_GOALS.disruptionsPerNodeDay.limit,
    ],
  ];
  // Days recorded before the figure existed have no attempts in their JSON.
  if (f.firstAttemptSuccessRate !== undefined)
    rows.push([
      'first-attempt launch success',
      `${Math.round(number('firstAttemptSuccessRate') * 100)}% of ${number('launchAttempts')} VM PUTs (${number('secondsLostToFailedAttempts')} s lost to failed ones)`,
      DAY_GOALS.firstAttemptSuccessRate.goal,
      number('firstAttemptSuccessRate') >= DAY_GOALS.firstAttemptSuccessRate.limit,
    ]);
  for (const [what, measured, goal, met] of rows)
    console.log(`  ${met ? '✔' : '✘'} ${what.padEnd(42)} ${measured.padEnd(48)} goal ${goal}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runDayBench();
