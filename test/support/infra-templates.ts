// The deployment templates as data, for the tests that hold them to the app's settings: Bicep is read as
// text (the Bicep CLI cannot be installed here), Terraform through HashiCorp's HCL parser (compiled to
// WASM in @cdktf/hcl2json). What this cannot see (resource schemas, ARM validation) is listed in
// infra/README.md.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';

const root = join(import.meta.dirname, '..', '..');
export const read = (path: string): string => readFileSync(join(root, path), 'utf8');

export type AppSettings = ReadonlyMap<string, string>;

/**
 * Every app setting function-app.bicep may write, name → value expression: its `var appSettings = { ... }`
 * and the `var durableTaskSchedulerSettings = { ... }` it adds with durableBackend=DurableTaskScheduler
 * (bicepDurableTaskSchedulerSettings alone).
 */
export function bicepAppSettings(): AppSettings {
  return new Map([...bicepSettingsObject('appSettings'), ...bicepDurableTaskSchedulerSettings()]);
}

/** The settings function-app.bicep writes only with durableBackend=DurableTaskScheduler. */
export function bicepDurableTaskSchedulerSettings(): AppSettings {
  return bicepSettingsObject('durableTaskSchedulerSettings');
}

/** The `var <name> = { ... }` object of function-app.bicep: name → value expression. */
function bicepSettingsObject(name: string): Map<string, string> {
  const text = read('infra/bicep/modules/function-app.bicep');
  const start = text.indexOf(`var ${name} = {`);
  if (start < 0) throw new Error(`function-app.bicep has no \`var ${name} = {\``);
  const body = bracedBlock(text, text.indexOf('{', start));
  const settings = new Map<string, string>();
  for (const line of body.split('\n')) {
    const match = /^\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*:\s*(.+?)\s*$/.exec(line);
    if (match) settings.set(match[1] as string, match[2] as string);
  }
  return settings;
}

/** The text between the brace at `open` and its partner, skipping quoted strings. */
export function bracedBlock(text: string, open: number): string {
  let depth = 0;
  let quoted = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'" && text[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (c === '{') depth++;
    if (c === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced braces from offset ${open}`);
}

export type Hcl = Record<string, unknown>;

export async function terraformFiles(): Promise<Hcl[]> {
  const dir = join(root, 'infra', 'terraform');
  const files = readdirSync(dir).filter((f) => f.endsWith('.tf'));
  return Promise.all(files.map(async (f) => (await parseHcl(f, readFileSync(join(dir, f), 'utf8'))) as Hcl));
}

function asRecord(value: unknown, what: string): Hcl {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not a block`);
  return value as Hcl;
}

/** A `locals` value by name, from whichever file defines it. */
export function terraformLocal(files: readonly Hcl[], name: string): unknown {
  return files
    .flatMap((f) => ((f.locals as Hcl[] | undefined) ?? []).map((l) => l[name]))
    .find((d) => d !== undefined);
}

/**
 * Every setting of the Flex Consumption app: its app_settings (through `local.<name>`, or a merge of
 * locals, each a map or a `{ for ... if ... }` filter of one) plus the settings the provider writes from
 * dedicated arguments. A filtered map counts whole: these are the names the template may write.
 */
export function terraformAppSettings(files: Hcl[]): AppSettings {
  const apps = files.flatMap((f) => {
    const resources = f.resource as Hcl | undefined;
    const flex = resources?.azurerm_function_app_flex_consumption as Hcl | undefined;
    return flex ? Object.values(flex).map((blocks) => (blocks as Hcl[])[0] as Hcl) : [];
  });
  if (apps.length !== 1)
    throw new Error(`expected exactly one azurerm_function_app_flex_consumption, found ${apps.length}`);
  const app = apps[0] as Hcl;
  const settings = new Map<string, string>();
  const visit = (raw: unknown, what: string): void => {
    if (typeof raw === 'string') {
      const locals = [...raw.matchAll(/\blocal\.([A-Za-z0-9_]+)\b/g)].map((m) => m[1] as string);
      if (!/^\$\{(?:local\.[A-Za-z0-9_]+|merge\([\s\S]*\))\}$/.test(raw) || locals.length === 0)
        throw new Error(`${what} is neither a local nor a merge of locals: ${raw}`);
      // A `{ for k, v in local.x : k => v if ... }` names its source map; its condition's locals are
      // flags, which are not maps and are skipped.
      for (const name of locals) {
        const value = terraformLocal(files, name);
        if (typeof value === 'object' && value !== null && !Array.isArray(value))
          visit(value, `local.${name}`);
        else if (typeof value === 'string' && /^\$\{(?:local\.|merge\()/.test(value))
          visit(value, `local.${name}`);
      }
      return;
    }
    for (const [k, v] of Object.entries(asRecord(raw, what))) settings.set(k, String(v));
  };
  visit(app.app_settings, 'app_settings');
  const siteConfig = (app.site_config as Hcl[] | undefined)?.[0];
  if (siteConfig?.application_insights_connection_string !== undefined) {
    settings.set(
      'APPLICATIONINSIGHTS_CONNECTION_STRING',
      String(siteConfig.application_insights_connection_string),
    );
  }
  return settings;
}

/** A Bicep `param` declaration: its type and its default's source text (undefined: required). */
export interface BicepParam {
  type: string;
  defaultText?: string;
}

/** The `param` declarations of a .bicep file, by name. */
export function bicepParams(path: string): Map<string, BicepParam> {
  const params = new Map<string, BicepParam>();
  for (const m of read(path).matchAll(/^param (\w+) (\w+)(?: = (.+))?$/gm)) {
    const [, name = '', type = '', defaultText] = m;
    params.set(name, { type, ...(defaultText !== undefined ? { defaultText } : {}) });
  }
  return params;
}

/** A Bicep literal as the app setting it becomes: 'text' is text, 15 is "15", [] is empty. */
export function bicepLiteralAsSetting(text: string): string {
  if (text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1).replace(/\\'/g, "'");
  if (text === '[]') return '';
  return text;
}

/** `module <symbol> '<path>' = { ... params: { ... } }` of a .bicep file: parameter name → expression. */
export function bicepModuleParams(path: string, symbol: string): Map<string, string> {
  const text = read(path);
  const start = text.search(new RegExp(`^module ${symbol} `, 'm'));
  if (start < 0) throw new Error(`${path} has no module ${symbol}`);
  const body = bracedBlock(text, text.indexOf('{', start));
  const paramsAt = body.search(/^\s*params: \{/m);
  if (paramsAt < 0) throw new Error(`module ${symbol} of ${path} has no params`);
  const params = bracedBlock(body, body.indexOf('{', paramsAt));
  const found = new Map<string, string>();
  for (const line of params.split('\n')) {
    const match = /^ {4}([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.+?)\s*$/.exec(line);
    if (match) found.set(match[1] as string, match[2] as string);
  }
  return found;
}

/** The `variable` blocks of every Terraform file: name → its default (undefined: required). */
export function terraformVariables(files: readonly Hcl[]): Map<string, { default?: unknown }> {
  const variables = new Map<string, { default?: unknown }>();
  for (const file of files)
    for (const [name, blocks] of Object.entries((file.variable as Hcl | undefined) ?? {})) {
      const block = (blocks as Hcl[])[0] ?? {};
      variables.set(name, 'default' in block ? { default: block.default } : {});
    }
  return variables;
}

/** A Terraform default as the app setting it becomes: 15 is "15", [] is empty, null is unset. */
export function terraformValueAsSetting(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? '' : value.join(',');
  return String(value);
}

/**
 * The input variables an expression depends on, following `local.<name>` and `<resource type>.<name>`
 * references to their definitions: app_settings' `azurerm_storage_queue.events.name` depends on
 * var.events_queue_name through the queue's name.
 */
export function terraformVariablesReferenced(files: readonly Hcl[], expression: string): Set<string> {
  const locals = new Map<string, unknown>();
  const resources = new Map<string, unknown>();
  for (const file of files) {
    for (const block of (file.locals as Hcl[] | undefined) ?? [])
      for (const [name, value] of Object.entries(block)) locals.set(name, value);
    for (const [type, byName] of Object.entries((file.resource as Hcl | undefined) ?? {}))
      for (const [name, blocks] of Object.entries(byName as Hcl)) resources.set(`${type}.${name}`, blocks);
  }
  const found = new Set<string>();
  const visited = new Set<string>();
  const visit = (text: string): void => {
    for (const [, name] of text.matchAll(/\bvar\.([A-Za-z0-9_]+)/g)) found.add(name as string);
    for (const [, name] of text.matchAll(/\blocal\.([A-Za-z0-9_]+)/g)) {
      const key = `local.${name}`;
      if (visited.has(key) || !locals.has(name as string)) continue;
      visited.add(key);
      visit(JSON.stringify(locals.get(name as string)));
    }
    for (const [, reference] of text.matchAll(/\b(azurerm_[a-z0-9_]+\.[A-Za-z0-9_]+)\b/g)) {
      if (visited.has(reference as string) || !resources.has(reference as string)) continue;
      visited.add(reference as string);
      visit(JSON.stringify(resources.get(reference as string)));
    }
  };
  visit(expression);
  return found;
}
