// The timeline picture: one row per NodeClaim, its phases as coloured bars on a shared time axis, with
// marks for moments that matter to the scenario (a pod bound, a VM failed). Pure: data in, SVG text out.
import { phaseMeaning, phaseOrder, type NodeClaimTimeline, type Phase } from './phases.js';

export interface TimelineMark {
  row: string;
  at: number;
  label: string;
  kind: 'bind' | 'failure' | 'note';
}

export interface TimelinePicture {
  title: string;
  subtitle?: string;
  start: number;
  end: number;
  rows: readonly NodeClaimTimeline[];
  marks?: readonly TimelineMark[];
}

const phaseColours: Record<Phase, string> = {
  Pending: '#c7c7c7',
  Launching: '#f2c14e',
  Launched: '#f78154',
  Registered: '#5fad56',
  Initialized: '#2e86ab',
  Disrupting: '#b370b0',
  LaunchFailed: '#d7263d',
  Terminating: '#6c757d',
};

const markColours: Record<TimelineMark['kind'], string> = {
  bind: '#111111',
  failure: '#d7263d',
  note: '#444444',
};

const left = 320;
const right = 30;
const width = 1150;
const rowHeight = 24;
const top = 70;
const legendColumns = 3;
const legendColumnWidth = 370;

export function renderTimelineSvg(picture: TimelinePicture): string {
  const plotWidth = width - left - right;
  const span = Math.max(1, picture.end - picture.start);
  const x = (at: number): number =>
    left + ((Math.min(Math.max(at, picture.start), picture.end) - picture.start) / span) * plotWidth;
  const rowsHeight = picture.rows.length * rowHeight;
  const legendTop = top + rowsHeight + 50;
  const legendRows = Math.ceil(phaseOrder.length / legendColumns);
  const height = legendTop + 40 + legendRows * 22;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escape(picture.title)}</text>`,
  );
  if (picture.subtitle) parts.push(`<text x="${left}" y="44" fill="#444">${escape(picture.subtitle)}</text>`);

  for (const tick of ticks(span)) {
    const tx = left + (tick / span) * plotWidth;
    parts.push(
      `<line x1="${tx.toFixed(1)}" y1="${top - 6}" x2="${tx.toFixed(1)}" y2="${top + rowsHeight}" stroke="#e5e5e5"/>`,
      `<text x="${tx.toFixed(1)}" y="${top + rowsHeight + 16}" text-anchor="middle" fill="#555">${formatSeconds(tick)}</text>`,
    );
  }
  parts.push(
    `<text x="${left + plotWidth / 2}" y="${top + rowsHeight + 34}" text-anchor="middle" fill="#555">seconds since the scenario started</text>`,
  );

  picture.rows.forEach((row, index) => {
    const y = top + index * rowHeight;
    const label = row.failureReason ? `${row.name} (${row.failureReason})` : row.name;
    parts.push(`<text x="${left - 8}" y="${y + 16}" text-anchor="end">${escape(truncate(label, 46))}</text>`);
    for (const segment of row.segments) {
      const x1 = x(segment.from);
      const x2 = Math.max(x1 + 1, x(segment.to));
      parts.push(
        `<rect x="${x1.toFixed(1)}" y="${y + 4}" width="${(x2 - x1).toFixed(1)}" height="${rowHeight - 8}" fill="${phaseColours[segment.phase]}"><title>${escape(`${row.name}: ${segment.phase} ${formatSeconds(segment.from - picture.start)}–${formatSeconds(segment.to - picture.start)} s`)}</title></rect>`,
      );
    }
    for (const mark of (picture.marks ?? []).filter((m) => m.row === row.name)) {
      const mx = x(mark.at);
      parts.push(
        `<path d="M ${mx.toFixed(1)} ${y + 2} l 5 -6 h -10 z" fill="${markColours[mark.kind]}"><title>${escape(mark.label)}</title></path>`,
        `<line x1="${mx.toFixed(1)}" y1="${y + 2}" x2="${mx.toFixed(1)}" y2="${y + rowHeight - 2}" stroke="${markColours[mark.kind]}" stroke-width="2"/>`,
      );
    }
  });

  phaseOrder.forEach((phase, index) => {
    const lx = 20 + (index % legendColumns) * legendColumnWidth;
    const ly = legendTop + Math.floor(index / legendColumns) * 22;
    parts.push(
      `<rect x="${lx}" y="${ly}" width="14" height="14" fill="${phaseColours[phase]}"/>`,
      `<text x="${lx + 20}" y="${ly + 12}">${escape(`${phase}: ${phaseMeaning[phase]}`)}</text>`,
    );
  });
  const markKinds = new Set((picture.marks ?? []).map((mark) => mark.kind));
  const markLegend: string[] = [];
  if (markKinds.has('bind')) markLegend.push('black mark: a pod bound to the NodeClaim’s Node');
  if (markKinds.has('failure')) markLegend.push('red mark: the VM’s creation failed in Azure');
  if (markLegend.length > 0)
    parts.push(
      `<text x="20" y="${legendTop + legendRows * 22 + 14}" fill="#333">${escape(markLegend.join('; '))}</text>`,
    );
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function ticks(spanMs: number): number[] {
  const steps = [500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000];
  const step = steps.find((candidate) => spanMs / candidate <= 12) ?? 600_000;
  const result: number[] = [];
  for (let tick = 0; tick <= spanMs; tick += step) result.push(tick);
  return result;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return seconds >= 10 || Number.isInteger(seconds) ? seconds.toFixed(0) : seconds.toFixed(1);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
