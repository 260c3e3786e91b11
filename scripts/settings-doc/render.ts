// docs/settings.md's tables of settings come from shared/config/setting-table.ts, so the page cannot list
// a setting, default or deployment input the table does not; `npm run docs:settings` rewrites the marked
// section and test/unit/setting-table.test.ts fails while the page differs from what this renders.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import {
  INFRASTRUCTURE_INPUTS,
  settingsReadBy,
  type SettingRow,
  type SettingSource,
} from '../../shared/config/setting-table.js';

export const SETTINGS_DOC = fileURLToPath(new URL('../../docs/settings.md', import.meta.url));
export const BEGIN_MARKER =
  '<!-- settings-table: generated from shared/config/setting-table.ts by `npm run docs:settings` -->';
export const END_MARKER = '<!-- settings-table: end -->';

/** A table cell: pipes escaped, and outside code spans `<placeholder>`s too, which would render as HTML. */
function cell(text: string): string {
  return text
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, '&lt;').replace(/>/g, '&gt;') : part))
    .join('`')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
}
const code = (text: string): string => (text === '' ? '(empty)' : `\`${text}\``);

function source(from: SettingSource | undefined): string {
  if (from === undefined) return '—';
  if ('input' in from) return code(from.input);
  if ('derived' in from) return `from ${from.derived}`;
  return `— (${from.absent})`;
}

function defaultOf(row: SettingRow): string {
  const own = row.default === undefined ? '—' : code(row.default);
  return row.deploymentDefault
    ? `${own}; deployed: ${code(row.deploymentDefault.value)} (${row.deploymentDefault.why})`
    : own;
}

function nameOf(row: SettingRow): string {
  const aliases = row.aliases?.length ? ` (alias ${row.aliases.map(code).join(', ')})` : '';
  return `${code(row.name)}${aliases}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The generated section, markers included, before formatting. */
export function renderSettingsSection(): string {
  const functions = settingsReadBy('functions').map((row) => [
    nameOf(row),
    defaultOf(row),
    row.platform ? `${row.description} (read by the Functions host or the Azure SDK)` : row.description,
    source(row.bicep),
    source(row.terraform),
    source(row.azd),
  ]);
  const bridge = settingsReadBy('bridge').map((row) => [
    nameOf(row),
    defaultOf(row),
    row.description,
    'value' in row.chart ? code(row.chart.value) : `— (${row.chart.absent})`,
    source(row.azd),
  ]);
  const inputs = INFRASTRUCTURE_INPUTS.map((i) => [
    i.bicep ? code(i.bicep) : '—',
    i.terraform ? code(i.terraform) : '—',
    i.description,
  ]);
  return [
    BEGIN_MARKER,
    '',
    '**Function App** (`shared/config/settings.ts`; the chart has none of these: the app runs in Azure). Bicep',
    'column: the parameter of `infra/bicep/main.bicep` (and `main.bicepparam`); azd: the environment variable',
    '(`azd env set NAME value`) that `infra/azd/main.bicepparam` passes to it.',
    '',
    table(['Setting', 'Default', 'Meaning', 'Bicep', 'Terraform', 'azd'], functions),
    '',
    '**Event bridge** (`bridge/config.ts`), deployed by the chart (`charts/nodeclaim-azure`); azd passes the',
    'variable to the chart (`infra/hooks/postprovision.mjs`). Neither template deploys the bridge.',
    '',
    table(['Setting', 'Default', 'Meaning', 'Chart value', 'azd'], bridge),
    '',
    '**Deployment inputs that are not app settings:**',
    '',
    table(['Bicep', 'Terraform', 'Meaning'], inputs),
    '',
    END_MARKER,
  ].join('\n');
}

/** `document` with its marked section replaced by the rendered one, formatted as the repository's Prettier does. */
export async function withRenderedSection(document: string): Promise<string> {
  const begin = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (begin < 0 || end < begin)
    throw new Error(`${SETTINGS_DOC} has no ${BEGIN_MARKER} … ${END_MARKER} section`);
  const replaced =
    document.slice(0, begin) + renderSettingsSection() + document.slice(end + END_MARKER.length);
  const options = (await resolveConfig(SETTINGS_DOC)) ?? {};
  return format(replaced, { ...options, filepath: SETTINGS_DOC });
}

/** Rewrites docs/settings.md; true when it changed. */
export async function writeSettingsDoc(): Promise<boolean> {
  const current = readFileSync(SETTINGS_DOC, 'utf8');
  const next = await withRenderedSection(current);
  if (next === current) return false;
  writeFileSync(SETTINGS_DOC, next);
  return true;
}
