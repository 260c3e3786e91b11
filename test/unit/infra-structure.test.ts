// Cross-file consistency of the templates, the part of `bicep build` and `terraform validate` that needs
// no resource schemas (neither tool can be installed here): Bicep modules exist and get exactly the
// parameters they declare; Terraform references only declared variables, locals, resources and data
// sources; the example parameter files fit; the bridge identity trusts the ServiceAccount the bridge
// manifests deploy.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { bracedBlock } from '../support/infra-templates.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** Text without // line comments (outside quotes), so commented-out code is not checked. */
function withoutLineComments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let quoted: string | undefined;
      for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (quoted) {
          if (c === quoted && line[i - 1] !== '\\') quoted = undefined;
        } else if (c === "'" || c === '"') quoted = c;
        else if ((c === '/' && line[i + 1] === '/') || c === '#') return line.slice(0, i);
      }
      return line;
    })
    .join('\n');
}

/** Keys at the top level of an object body (nested objects and arrays skipped). */
function topLevelKeys(body: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (const line of body.split('\n')) {
    const match = depth === 0 ? /^\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*:/.exec(line) : null;
    if (match) keys.push(match[1] as string);
    for (const c of line.replace(/'(?:[^'\\]|\\.)*'/g, "''")) {
      if (c === '{' || c === '[') depth++;
      if (c === '}' || c === ']') depth--;
    }
  }
  return keys;
}

interface BicepParam {
  name: string;
  required: boolean;
}

function bicepParams(text: string): BicepParam[] {
  return [...withoutLineComments(text).matchAll(/^param\s+([A-Za-z_]\w*)\s+\w+(\s*=)?/gm)].map((m) => ({
    name: m[1] as string,
    required: m[2] === undefined,
  }));
}

interface ModuleUse {
  file: string;
  symbol: string;
  path: string;
  params: string[];
}

function moduleUses(file: string): ModuleUse[] {
  const text = withoutLineComments(read(file));
  return [...text.matchAll(/^module\s+(\w+)\s+'([^']+)'\s*=\s*(?:if\s*\([^)]*\)\s*)?\{/gm)].map((m) => {
    const body = bracedBlock(text, (m.index as number) + m[0].length - 1);
    const paramsAt = body.search(/\bparams:\s*\{/);
    const params = paramsAt < 0 ? [] : topLevelKeys(bracedBlock(body, body.indexOf('{', paramsAt)));
    return { file, symbol: m[1] as string, path: join(dirname(file), m[2] as string), params };
  });
}

const bicepFiles = [
  'infra/bicep/main.bicep',
  ...readdirSync(join(root, 'infra/bicep/modules'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.bicep'))
    .map((f) => `infra/bicep/modules/${f}`),
];

describe('Bicep', () => {
  it('parses module parameter lists, so a wrong one would be seen', () => {
    const sample = `module m 'x.bicep' = {\n  name: 'm'\n  params: {\n    a: 1\n    b: { c: 2 }\n    d: [\n      'e'\n    ]\n  }\n}\n`;
    const body = bracedBlock(sample, sample.indexOf('{'));
    expect(topLevelKeys(bracedBlock(body, body.indexOf('{', body.search(/params:/))))).toEqual([
      'a',
      'b',
      'd',
    ]);
  });

  it('every module file exists and gets exactly the parameters it declares, all required ones included', () => {
    const uses = bicepFiles.flatMap(moduleUses);
    expect(uses.length).toBeGreaterThanOrEqual(10);
    for (const use of uses) {
      const where = `${use.file}: module ${use.symbol} (${use.path})`;
      expect(existsSync(join(root, use.path)), where).toBe(true);
      const declared = bicepParams(read(use.path));
      const names = new Set(declared.map((p) => p.name));
      expect(
        use.params.filter((p) => !names.has(p)),
        `${where} passes undeclared`,
      ).toEqual([]);
      const missing = declared.filter((p) => p.required && !use.params.includes(p.name)).map((p) => p.name);
      expect(missing, `${where} misses required`).toEqual([]);
    }
  });

  it('every parameter is documented', () => {
    for (const file of bicepFiles) {
      const lines = read(file).split('\n');
      lines.forEach((line, i) => {
        if (!/^param\s/.test(line)) return;
        const decorators = [];
        for (let j = i - 1; j >= 0 && /^@/.test(lines[j] as string); j--) decorators.push(lines[j]);
        expect(
          decorators.some((d) => d?.startsWith('@description(')),
          `${file}: ${line}`,
        ).toBe(true);
      });
    }
  });

  it('main.bicepparam sets only declared parameters and every required one', () => {
    const declared = bicepParams(read('infra/bicep/main.bicep'));
    const set = [...read('infra/bicep/main.bicepparam').matchAll(/^param\s+(\w+)\s*=/gm)].map((m) => m[1]);
    const names = new Set(declared.map((p) => p.name));
    expect(set.filter((p) => !names.has(p as string))).toEqual([]);
    expect(declared.filter((p) => p.required && !set.includes(p.name)).map((p) => p.name)).toEqual([]);
  });

  it('no parameter takes a cluster-wide bootstrap token: every launch creates its node its own', () => {
    for (const file of ['infra/bicep/main.bicep', 'infra/bicep/main.bicepparam', 'infra/azd/main.bicep']) {
      expect(read(file), file).not.toMatch(/bootstrapToken/);
    }
  });
});

type Hcl = Record<string, unknown>;

const terraformDir = join(root, 'infra/terraform');
const terraformFileNames = readdirSync(terraformDir).filter((f) => f.endsWith('.tf'));

async function terraformConfig(): Promise<Hcl[]> {
  return Promise.all(
    terraformFileNames.map(
      async (f) => (await parseHcl(f, readFileSync(join(terraformDir, f), 'utf8'))) as Hcl,
    ),
  );
}

function declaredNames(files: Hcl[]): Record<'variable' | 'local' | 'resource' | 'data', Set<string>> {
  const names = {
    variable: new Set<string>(),
    local: new Set<string>(),
    resource: new Set<string>(),
    data: new Set<string>(),
  };
  for (const file of files) {
    for (const name of Object.keys((file.variable as Hcl | undefined) ?? {})) names.variable.add(name);
    for (const block of (file.locals as Hcl[] | undefined) ?? [])
      for (const name of Object.keys(block)) names.local.add(name);
    for (const [type, byName] of Object.entries((file.resource as Hcl | undefined) ?? {}))
      for (const name of Object.keys(byName as Hcl)) names.resource.add(`${type}.${name}`);
    for (const [type, byName] of Object.entries((file.data as Hcl | undefined) ?? {}))
      for (const name of Object.keys(byName as Hcl)) names.data.add(`${type}.${name}`);
  }
  return names;
}

/** References in expressions: var.x, local.x, data.t.n, and resource t.n (azurerm_*). */
function terraformReferences(): {
  kind: 'variable' | 'local' | 'resource' | 'data';
  name: string;
  file: string;
}[] {
  const refs: { kind: 'variable' | 'local' | 'resource' | 'data'; name: string; file: string }[] = [];
  for (const file of terraformFileNames) {
    // A `moved` block's `from` names an address of an earlier version, which is gone by design.
    const text = withoutLineComments(readFileSync(join(terraformDir, file), 'utf8')).replace(
      /^\s*from\s*=.*$/gm,
      '',
    );
    for (const m of text.matchAll(/\bvar\.(\w+)/g))
      refs.push({ kind: 'variable', name: m[1] as string, file });
    for (const m of text.matchAll(/\blocal\.(\w+)/g))
      refs.push({ kind: 'local', name: m[1] as string, file });
    for (const m of text.matchAll(/\bdata\.(\w+)\.(\w+)/g))
      refs.push({ kind: 'data', name: `${m[1]}.${m[2]}`, file });
    for (const m of text.matchAll(/(?<![\w."])(azurerm_\w+)\.(\w+)/g))
      refs.push({ kind: 'resource', name: `${m[1]}.${m[2]}`, file });
  }
  return refs;
}

describe('Terraform', () => {
  it('every file parses as HCL', async () => {
    await expect(parseHcl('broken.tf', 'resource "x" "y" {\n  name = \n}\n')).rejects.toThrow();
    const files = await terraformConfig();
    expect(files).toHaveLength(terraformFileNames.length);
    expect(terraformFileNames.sort()).toEqual(
      [
        'aks_cluster_inputs.tf',
        'bridge_identity.tf',
        'function_app.tf',
        'main.tf',
        'monitoring.tf',
        'outputs.tf',
        'durable_task_scheduler.tf',
        'rbac.tf',
        'registry.tf',
        'storage.tf',
        'variables.tf',
        'versions.tf',
      ].sort(),
    );
  });

  it('references only declared variables, locals, resources and data sources', async () => {
    const declared = declaredNames(await terraformConfig());
    const refs = terraformReferences();
    expect(refs.length).toBeGreaterThan(50);
    const dangling = refs
      .filter((ref) => !declared[ref.kind].has(ref.name))
      .map((r) => `${r.file}: ${r.kind} ${r.name}`);
    expect(dangling).toEqual([]);
  });

  it('every variable is documented and used', async () => {
    const files = await terraformConfig();
    const used = new Set(
      terraformReferences()
        .filter((r) => r.kind === 'variable')
        .map((r) => r.name),
    );
    for (const file of files) {
      for (const [name, blocks] of Object.entries((file.variable as Hcl | undefined) ?? {})) {
        const block = (blocks as Hcl[])[0] as Hcl;
        expect(typeof block.description, name).toBe('string');
        expect(used.has(name), `variable ${name} is never used`).toBe(true);
      }
    }
  });

  it('terraform.tfvars.example sets only declared variables and, with the one from the environment, every required one', async () => {
    const files = await terraformConfig();
    const variables = Object.assign({}, ...files.map((f) => (f.variable as Hcl | undefined) ?? {})) as Hcl;
    const example = (await parseHcl(
      'terraform.tfvars',
      read('infra/terraform/terraform.tfvars.example'),
    )) as Hcl;
    const set = new Set([...Object.keys(example), 'kube_ca_cert']);
    expect(Object.keys(example).filter((name) => !(name in variables))).toEqual([]);
    const required = Object.entries(variables)
      .filter(([, blocks]) => !('default' in ((blocks as Hcl[])[0] as Hcl)))
      .map(([name]) => name);
    expect(required.filter((name) => !set.has(name))).toEqual([]);
  });

  it('no variable takes a cluster-wide bootstrap token', () => {
    expect(read('infra/terraform/variables.tf')).not.toMatch(/variable "bootstrap_token"/);
  });
});

describe('bridge identity and manifests', () => {
  const manifests = ['serviceaccount.yaml', 'configmap.yaml'].map(
    (f) =>
      parseYaml(read(`infra/k8s/bridge/${f}`)) as {
        metadata: { name: string; namespace: string };
        data?: Record<string, string>;
      },
  );
  const [serviceAccount, configMap] = manifests as [(typeof manifests)[number], (typeof manifests)[number]];

  it('the federated credential trusts the ServiceAccount the bridge manifests deploy', () => {
    const bicep = read('infra/bicep/main.bicep');
    const variables = read('infra/terraform/variables.tf');
    expect(bicep).toContain(
      `param bridgeServiceAccountNamespace string = '${serviceAccount.metadata.namespace}'`,
    );
    expect(bicep).toContain(`param bridgeServiceAccountName string = '${serviceAccount.metadata.name}'`);
    expect(variables).toMatch(
      new RegExp(
        `variable "bridge_service_account_namespace" \\{[^}]*default\\s*=\\s*"${serviceAccount.metadata.namespace}"`,
      ),
    );
    expect(variables).toMatch(
      new RegExp(
        `variable "bridge_service_account_name" \\{[^}]*default\\s*=\\s*"${serviceAccount.metadata.name}"`,
      ),
    );
  });

  it('the outputs fill in the bridge ConfigMap and the queue names agree', () => {
    expect(Object.keys(configMap.data ?? {})).toEqual(
      expect.arrayContaining(['BRIDGE_QUEUE_SERVICE_URL', 'BRIDGE_QUEUE_NAME']),
    );
    expect(read('infra/bicep/main.bicep')).toContain(
      `param eventsQueueName string = '${configMap.data?.BRIDGE_QUEUE_NAME}'`,
    );
    expect(read('infra/terraform/variables.tf')).toMatch(
      new RegExp(
        `variable "events_queue_name" \\{[^}]*default\\s*=\\s*"${configMap.data?.BRIDGE_QUEUE_NAME}"`,
      ),
    );
    expect(read('infra/bicep/main.bicep')).toMatch(/output bridgeQueueServiceUrl string/);
    expect(read('infra/terraform/outputs.tf')).toMatch(/output "bridge_queue_service_url"/);
  });
});
