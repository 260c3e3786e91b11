// A setting that is not an input of every deployment tool is lost at the next deployment (each writes the
// whole set), and a default that differs from the app's changes behaviour on the first deployment. This
// holds shared/config/setting-table.ts to the names the code reads (found by running its readers), to the
// app's defaults, and to the text of main.bicep, main.bicepparam, the Function App module, the azd entry
// point and hooks, the Terraform variables and app_settings, and the chart's values and ConfigMap; and
// docs/settings.md to the table rendered from it. Each failure names the setting and the file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadBridgeConfig } from '../../bridge/config.js';
import {
  INFRASTRUCTURE_INPUTS,
  SETTING_TABLE,
  settingsReadBy,
  type SettingRow,
} from '../../shared/config/setting-table.js';
import {
  loadSettings,
  RETIRED_SETTING_ALIASES,
  SETTING_ALIASES,
  timerSchedules,
} from '../../shared/config/settings.js';
import { SETTINGS_DOC, withRenderedSection } from '../../scripts/settings-doc/render.js';
import {
  bicepAppSettings,
  bicepLiteralAsSetting,
  bicepModuleParams,
  bicepParams,
  terraformAppSettings,
  terraformFiles,
  terraformValueAsSetting,
  terraformVariables,
  terraformVariablesReferenced,
  type AppSettings,
  type BicepParam,
  type Hcl,
} from '../support/infra-templates.js';
import {
  bindingExpressions,
  namesTheBridgeCodeReads,
  namesTheFunctionsCodeReads,
} from '../support/setting-reads.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const functionsRows = settingsReadBy('functions');
const bridgeRows = settingsReadBy('bridge');
const inputOf = (source: SettingRow['bicep'] | undefined): string | undefined =>
  source && 'input' in source ? source.input : undefined;

/** What a deployment input may default to: the app's default, or the row's documented deployment default. */
function allowedDefaults(row: SettingRow): string[] {
  return [row.default ?? '', ...(row.deploymentDefault ? [row.deploymentDefault.value] : [])];
}

describe('the settings table and the code', () => {
  it('lists each setting once per program', () => {
    const keys = SETTING_TABLE.map((row) => `${row.reader}/${row.name}`);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });

  it('lists exactly the settings the Function App reads (aliases and retired names apart)', () => {
    const read = new Set([...namesTheFunctionsCodeReads(), ...bindingExpressions()]);
    expect(read).toContain('VM_MEMORY_OVERHEAD_PERCENT');
    const aliases = new Set(functionsRows.flatMap((row) => row.aliases ?? []));
    const retired = new Set<string>(Object.values(RETIRED_SETTING_ALIASES).map((r) => r.alias));
    const settings = [...read].filter((name) => !aliases.has(name) && !retired.has(name)).sort();
    const listed = functionsRows.filter((row) => !row.platform).map((row) => row.name);
    expect(
      settings.filter((name) => !listed.includes(name)),
      'read by the code, missing from the table',
    ).toEqual([]);
    expect(
      listed.filter((name) => !settings.includes(name)),
      'in the table, never read by the code',
    ).toEqual([]);
    const platform = functionsRows.filter((row) => row.platform).map((row) => row.name);
    expect(
      platform.filter((name) => read.has(name)),
      'marked platform but read by the code',
    ).toEqual([]);
  });

  it("names every alias settings.ts reads, as settings.ts's SETTING_ALIASES does", () => {
    const listed = Object.fromEntries(
      functionsRows.filter((row) => row.aliases).map((row) => [row.name, [...(row.aliases ?? [])]]),
    );
    expect(listed).toEqual({
      ...Object.fromEntries(Object.entries(SETTING_ALIASES).map(([name, a]) => [name, [...a]])),
      FEATURE_GATES: ['SPOT_TO_SPOT_CONSOLIDATION'],
    });
  });

  it('lists exactly the settings the event bridge reads', () => {
    expect([...namesTheBridgeCodeReads()].sort()).toEqual(bridgeRows.map((row) => row.name).sort());
  });
});

describe("the table's defaults are the app's", () => {
  const example = (
    JSON.parse(read('local.settings.example.json')) as { Values: Record<string, string | undefined> }
  ).Values;
  // The Entra branch, so that the settings only it reads (KUBE_TOKEN_SCOPE) are checked too.
  const { KUBECONFIG: _kubeconfig, ...entra } = example;
  const base: Record<string, string | undefined> = {
    ...entra,
    CLUSTER_ENDPOINT: 'https://cluster.example:443',
    KUBE_CA_CERT: example['BOOTSTRAP_CA_CERT'],
  };
  const without = (row: SettingRow): Record<string, string | undefined> => {
    const env = { ...base };
    for (const name of [row.name, ...(row.aliases ?? [])]) delete env[name];
    return env;
  };
  /** What the Function App makes of an environment: its settings and timers, or the refusal. */
  const functionsView = (env: Record<string, string | undefined>) => {
    try {
      return { settings: loadSettings(env), timers: timerSchedules(env) };
    } catch (error) {
      return { refused: (error as Error).message };
    }
  };
  const bridgeBase = {
    CLUSTER_NAME: 'cluster',
    BRIDGE_QUEUE_NAME: 'nodeclaim-events',
    BRIDGE_QUEUE_SERVICE_URL: 'https://account.queue.core.windows.net',
    KUBERNETES_SERVICE_HOST: '10.0.0.1',
  };

  it('the comparison sees a setting changed from its default', () => {
    const row = functionsRows.find((r) => r.name === 'GC_SCHEDULE') as SettingRow;
    expect(functionsView({ ...without(row), GC_SCHEDULE: '0 */7 * * * *' })).not.toEqual(
      functionsView(without(row)),
    );
    expect(functionsView({ ...base, BATCH_MAX_DURATION: '11s' })).not.toEqual(functionsView(base));
  });

  for (const row of functionsRows.filter((r) => r.default !== undefined)) {
    it(`${row.name}=${row.default} is what the Function App does when it is unset, and so is empty`, () => {
      const unset = functionsView(without(row));
      expect(unset).not.toHaveProperty('refused');
      expect(functionsView({ ...without(row), [row.name]: row.default })).toEqual(unset);
      if (row.emptyMeans) expect(functionsView({ ...without(row), [row.name]: '' })).not.toEqual(unset);
      else expect(functionsView({ ...without(row), [row.name]: '' })).toEqual(unset);
    });
  }

  for (const row of bridgeRows.filter((r) => r.default !== undefined)) {
    it(`${row.name}=${row.default} is what the bridge does when it is unset`, () => {
      const { [row.name as keyof typeof bridgeBase]: _dropped, ...unset } = bridgeBase;
      expect(loadBridgeConfig({ ...unset, [row.name]: row.default })).toEqual(loadBridgeConfig(unset));
    });
  }
});

describe('Bicep and azd have an input for every Function App setting', () => {
  const main = bicepParams('infra/bicep/main.bicep');
  const mainText = read('infra/bicep/main.bicep');
  const exampleParams = new Set(
    [...read('infra/bicep/main.bicepparam').matchAll(/^param (\w+) =/gm)].map((m) => m[1]),
  );
  const moduleParams = bicepParams('infra/bicep/modules/function-app.bicep');
  const appSettings = bicepAppSettings();
  const azd = bicepParams('infra/azd/main.bicep');
  const azdPasses = bicepModuleParams('infra/azd/main.bicep', 'app');
  const azdParamFile = read('infra/azd/main.bicepparam');

  const defaultOf = (param: BicepParam): string | undefined =>
    param.defaultText === undefined ? undefined : bicepLiteralAsSetting(param.defaultText);

  for (const row of functionsRows) {
    const input = inputOf(row.bicep);
    if (input === undefined) {
      it(`${row.name}: ${'derived' in row.bicep ? 'derived by' : 'not written by'} the templates`, () => {
        expect(appSettings.has(row.name), `function-app.bicep writes ${row.name}`).toBe(
          'derived' in row.bicep,
        );
        expect(row.azd, `${row.name} has no azd input when Bicep has none`).toBeUndefined();
      });
      continue;
    }
    it(`${row.name} is main.bicep's ${input}, with the app's default, and reaches the app setting`, () => {
      const param = main.get(input);
      expect(param, `main.bicep declares param ${input} (${row.name})`).toBeDefined();
      const written = defaultOf(param as BicepParam);
      if (written === undefined)
        expect(
          row.default ?? row.deploymentDefault,
          `${row.name} is required in main.bicep but has a default`,
        ).toBeUndefined();
      else expect(allowedDefaults(row), `main.bicep's default of ${input} (${row.name})`).toContain(written);
      expect(exampleParams.has(input), `main.bicepparam sets ${input} (${row.name})`).toBe(true);
      const uses = mainText.split('\n').filter((line) => new RegExp(`\\b${input}\\b`).test(line));
      expect(uses.length, `main.bicep uses ${input} beyond declaring it`).toBeGreaterThan(1);
      const expression = appSettings.get(row.name);
      expect(expression, `function-app.bicep writes ${row.name}`).toBeDefined();
      const fromParams = [...moduleParams.keys()].filter((p) =>
        new RegExp(`\\b${p}\\b`).test(expression as string),
      );
      expect(fromParams.length, `${row.name}'s value comes from a parameter of the module`).toBeGreaterThan(
        0,
      );
    });

    it(`${row.name} is set through azd as ${JSON.stringify(row.azd)}`, () => {
      expect(row.azd, `${row.name} says how azd sets it`).toBeDefined();
      const azdSource = row.azd as NonNullable<SettingRow['azd']>;
      if ('input' in azdSource) {
        const param = azd.get(input);
        expect(param, `infra/azd/main.bicep declares param ${input}`).toBeDefined();
        if (param?.defaultText !== undefined)
          expect(allowedDefaults(row), `infra/azd/main.bicep's default of ${input}`).toContain(
            bicepLiteralAsSetting(param.defaultText),
          );
        expect(azdPasses.get(input), `infra/azd/main.bicep passes ${input}`).toBeDefined();
        // param <input> = [int(|bool(]readEnvironmentVariable('<variable>'[, '<fallback>'])
        const line = new RegExp(
          `^param ${input} = .*readEnvironmentVariable\\('${azdSource.input}'(?:, ('(?:[^'\\\\]|\\\\.)*'))?\\)`,
          'm',
        ).exec(azdParamFile);
        expect(line, `infra/azd/main.bicepparam reads ${azdSource.input} into ${input}`).not.toBeNull();
        const fallback = line?.[1];
        if (fallback === undefined)
          expect(row.default ?? row.deploymentDefault, `azd requires ${azdSource.input}`).toBeUndefined();
        else
          expect(allowedDefaults(row), `azd's default of ${azdSource.input}`).toContain(
            bicepLiteralAsSetting(fallback),
          );
      } else if ('derived' in azdSource) {
        expect(azdPasses.get(input), `infra/azd/main.bicep passes ${input}`).toBeDefined();
        expect(azd.has(input), `${input} is derived by azd, not an azd parameter`).toBe(false);
      } else {
        expect(azdPasses.has(input), `infra/azd/main.bicep leaves ${input} at its default`).toBe(false);
      }
    });
  }

  it('every parameter of main.bicep is a setting or a listed infrastructure input', () => {
    const known = new Set([
      ...functionsRows.map((row) => inputOf(row.bicep)),
      ...INFRASTRUCTURE_INPUTS.map((i) => i.bicep),
    ]);
    expect([...main.keys()].filter((name) => !known.has(name))).toEqual([]);
    expect(INFRASTRUCTURE_INPUTS.flatMap((i) => (i.bicep && !main.has(i.bicep) ? [i.bicep] : []))).toEqual(
      [],
    );
  });

  it('every parameter of the azd entry point is one of main.bicep', () => {
    expect([...azd.keys()].filter((name) => !main.has(name))).toEqual([]);
  });

  it('every app setting function-app.bicep writes is in the table', () => {
    const names = new Set(functionsRows.map((row) => row.name));
    expect([...appSettings.keys()].filter((name) => !names.has(name))).toEqual([]);
  });
});

describe('Terraform has a variable for every Function App setting', () => {
  let files: Hcl[];
  let variables: Map<string, { default?: unknown }>;
  let appSettings: AppSettings;

  beforeAll(async () => {
    files = await terraformFiles();
    variables = terraformVariables(files);
    appSettings = terraformAppSettings(files);
  });

  for (const row of functionsRows) {
    const input = inputOf(row.terraform);
    it(`${row.name}: ${input ? `variable ${input}` : Object.keys(row.terraform)[0]}`, () => {
      if (input === undefined) {
        expect(appSettings.has(row.name), `app_settings has ${row.name}`).toBe('derived' in row.terraform);
        return;
      }
      const variable = variables.get(input);
      expect(variable, `variable "${input}" is declared (${row.name})`).toBeDefined();
      const written = terraformValueAsSetting(variable?.default);
      if (written === undefined)
        expect(
          row.default ?? row.deploymentDefault,
          `${row.name} is required in Terraform but has a default`,
        ).toBeUndefined();
      else expect(allowedDefaults(row), `the default of ${input} (${row.name})`).toContain(written);
      const expression = appSettings.get(row.name);
      expect(expression, `app_settings has ${row.name}`).toBeDefined();
      expect(
        [...terraformVariablesReferenced(files, expression as string)],
        `${row.name} comes from var.${input}`,
      ).toContain(input);
    });
  }

  it('every variable is a setting or a listed infrastructure input', () => {
    const known = new Set([
      ...functionsRows.map((row) => inputOf(row.terraform)),
      ...INFRASTRUCTURE_INPUTS.map((i) => i.terraform),
    ]);
    expect([...variables.keys()].filter((name) => !known.has(name))).toEqual([]);
    expect(
      INFRASTRUCTURE_INPUTS.flatMap((i) => (i.terraform && !variables.has(i.terraform) ? [i.terraform] : [])),
    ).toEqual([]);
  });

  it('every app setting is in the table', () => {
    const names = new Set(functionsRows.map((row) => row.name));
    expect([...appSettings.keys()].filter((name) => !names.has(name))).toEqual([]);
  });
});

describe('the chart has a value for every bridge setting it deploys', () => {
  const values = parseYaml(read('charts/nodeclaim-azure/values.yaml')) as Record<string, unknown>;
  const configMap = read('charts/nodeclaim-azure/templates/configmap.yaml');
  const postprovision = read('infra/hooks/postprovision.mjs');
  const valueAt = (path: string): unknown =>
    path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], values);
  const configMapKeys = [...configMap.matchAll(/^ {2}([A-Z_]+):/gm)].map((m) => m[1] as string);

  for (const row of bridgeRows) {
    if ('absent' in row.chart) {
      it(`${row.name} is not in the chart: ${row.chart.absent}`, () => {
        expect(configMapKeys).not.toContain(row.name);
      });
      continue;
    }
    const path = row.chart.value;
    it(`${row.name} is ${path}, with the bridge's default, and azd passes it`, () => {
      const value = valueAt(path);
      expect(value, `values.yaml has ${path}`).toBeDefined();
      expect(allowedDefaults(row), `values.yaml's ${path}`).toContain(String(value));
      expect(configMap, `configmap.yaml sets ${row.name} from .Values.${path}`).toMatch(
        new RegExp(`^ {2}${row.name}: .*\\.Values\\.${path.replace(/\./g, '\\.')}\\b`, 'm'),
      );
      const azdSource = row.azd;
      expect(azdSource, `${row.name} says how azd sets it`).toBeDefined();
      if (azdSource && 'input' in azdSource)
        expect(postprovision).toContain(`['${azdSource.input}', '${path}',`);
      else expect(postprovision).toContain(`\`${path}=\${`);
    });
  }

  it('every ConfigMap entry and every value under settings is a bridge setting', () => {
    expect(configMapKeys.filter((key) => !bridgeRows.some((row) => row.name === key))).toEqual([]);
    const chartValues = new Set(bridgeRows.flatMap((row) => ('value' in row.chart ? [row.chart.value] : [])));
    const settingsValues = Object.keys(values['settings'] as Record<string, unknown>).map(
      (k) => `settings.${k}`,
    );
    expect(settingsValues.filter((path) => !chartValues.has(path))).toEqual([]);
  });

  it('values.schema.json names every key of values.yaml, and refuses others wherever the chart owns the object', () => {
    interface Schema {
      properties?: Record<string, Schema>;
      additionalProperties?: boolean | Schema;
      $ref?: string;
    }
    const schema = JSON.parse(read('charts/nodeclaim-azure/values.schema.json')) as Schema & {
      definitions: Record<string, Schema>;
    };
    const unlisted: string[] = [];
    const walk = (value: unknown, node: Schema, path: string): void => {
      if (node.$ref) return;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
      // An object the chart passes through to Kubernetes (no properties listed) is Kubernetes' to check.
      if (node.properties === undefined) return;
      expect(node.additionalProperties, `${path || 'the top level'} refuses unknown keys`).toBe(false);
      for (const [key, child] of Object.entries(value)) {
        const childSchema = node.properties[key];
        if (childSchema === undefined) unlisted.push(`${path}${key}`);
        else walk(child, childSchema, `${path}${key}.`);
      }
    };
    walk(values, schema, '');
    expect(unlisted).toEqual([]);
  });
});

describe('docs/settings.md', () => {
  it('holds the table as `npm run docs:settings` renders it', async () => {
    const current = readFileSync(SETTINGS_DOC, 'utf8');
    expect(current).toContain('`VM_MEMORY_OVERHEAD_PERCENT`');
    expect(await withRenderedSection(current), 'run npm run docs:settings').toBe(current);
  });
});
