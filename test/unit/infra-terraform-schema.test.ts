// The part of `terraform validate` that needs the providers' schemas, which cannot be downloaded here:
// every argument and nested block the templates set, and every attribute they reference, is one the
// pinned provider version documents. The schemas are a fixture extracted from the providers'
// documentation at the pinned release tags (test/support/extract-terraform-schema.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DocumentedSchema } from '../support/terraform-docs-schema.js';
import type { SchemaFixture } from '../support/extract-terraform-schema.js';

const root = join(import.meta.dirname, '..', '..');
const terraformDir = join(root, 'infra', 'terraform');
const fixture = JSON.parse(
  readFileSync(join(root, 'test', 'fixtures', 'terraform-provider-schemas.json'), 'utf8'),
) as SchemaFixture;

/** Terraform's own arguments, valid in every resource and data block. */
const metaArguments = new Set([
  'count',
  'for_each',
  'depends_on',
  'lifecycle',
  'provider',
  'provisioner',
  'connection',
]);

type Body = Record<string, unknown>;
type Hcl = Record<string, Record<string, Record<string, Body[]>>>;

const files = readdirSync(terraformDir).filter((f) => f.endsWith('.tf'));
const sources = new Map(files.map((f) => [f, readFileSync(join(terraformDir, f), 'utf8')]));
let parsed: Array<{ file: string; hcl: Hcl }> = [];

beforeAll(async () => {
  parsed = await Promise.all(
    [...sources].map(async ([file, text]) => ({ file, hcl: (await parseHcl(file, text)) as Hcl })),
  );
});

const isBlockList = (value: unknown): value is Body[] =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));

/** Arguments and blocks a body sets that the schema does not document, as "path.name". */
function undocumented(
  body: Body,
  schema: DocumentedSchema,
  allowed: readonly string[],
  path: string,
  meta: boolean,
): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (meta && metaArguments.has(name)) continue;
    if (name === 'dynamic') {
      for (const [blockName, dynamics] of Object.entries(value as Record<string, Body[]>)) {
        if (!allowed.includes(blockName)) problems.push(`${path}.${blockName} (dynamic)`);
        for (const dynamic of dynamics)
          for (const content of (dynamic.content as Body[] | undefined) ?? [])
            problems.push(
              ...undocumented(content, schema, schema.blocks[blockName] ?? [], `${path}.${blockName}`, false),
            );
      }
      continue;
    }
    if (!allowed.includes(name)) {
      problems.push(`${path}.${name}`);
      continue;
    }
    const nested = schema.blocks[name];
    if (nested && isBlockList(value))
      for (const inner of value)
        problems.push(...undocumented(inner, schema, nested, `${path}.${name}`, false));
  }
  return problems;
}

describe("Terraform against the pinned providers' documented schemas", () => {
  it('pins each provider to the exact version the fixture was extracted from', () => {
    const versions = sources.get('versions.tf') ?? '';
    for (const [name, { version }] of Object.entries(fixture.providers)) {
      expect(versions).toMatch(
        new RegExp(`${name} = \\{[^}]*version = "${version.replace(/\./g, '\\.')}"`, 's'),
      );
    }
    expect(Object.keys(fixture.providers).sort()).toEqual(['azapi', 'azurerm']);
  });

  it('documents every resource and data source type the templates use', () => {
    const used = (kind: 'resource' | 'data') => [
      ...new Set(parsed.flatMap(({ hcl }) => Object.keys(hcl[kind] ?? {}))),
    ];
    expect(used('resource').filter((type) => !fixture.resources[type])).toEqual([]);
    expect(used('data').filter((type) => !fixture.data[type])).toEqual([]);
  });

  it('sets only documented arguments and blocks, at every nesting level', () => {
    const problems: string[] = [];
    for (const { file, hcl } of parsed) {
      for (const kind of ['resource', 'data'] as const) {
        for (const [type, instances] of Object.entries(hcl[kind] ?? {})) {
          const schema = (kind === 'resource' ? fixture.resources : fixture.data)[type];
          if (!schema) continue;
          for (const [name, bodies] of Object.entries(instances))
            for (const body of bodies)
              problems.push(
                ...undocumented(
                  body,
                  schema,
                  [...schema.arguments, ...Object.keys(schema.blocks)],
                  `${file}: ${type}.${name}`,
                  true,
                ),
              );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('configures the providers with documented arguments only', () => {
    const problems: string[] = [];
    for (const { file, hcl } of parsed) {
      for (const [name, bodies] of Object.entries(
        (hcl.provider ?? {}) as unknown as Record<string, Body[]>,
      )) {
        const schema = fixture.providers[name]?.provider;
        if (!schema) {
          problems.push(`${file}: provider ${name} has no fixture`);
          continue;
        }
        for (const body of bodies)
          problems.push(
            ...undocumented(
              body,
              schema,
              [...schema.arguments, ...Object.keys(schema.blocks)],
              `${file}: provider.${name}`,
              false,
            ),
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('references only documented arguments and attributes of resources and data sources', () => {
    const problems: string[] = [];
    for (const [file, text] of sources) {
      const code = text.replace(/^\s*#.*$/gm, '');
      for (const m of code.matchAll(
        /(?<![\w.])(data\.)?((?:azurerm|azapi)_\w+)\.(\w+)(?:\[[^\]]*\])?\.(\w+)/g,
      )) {
        const schema = (m[1] ? fixture.data : fixture.resources)[m[2] as string];
        const attribute = m[4] as string;
        if (!schema) continue;
        if (![...schema.arguments, ...schema.attributes].includes(attribute))
          problems.push(`${file}: ${m[0]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('would catch an argument the pinned version lacks (the check is not vacuous)', () => {
    const flex = fixture.resources.azurerm_function_app_flex_consumption as DocumentedSchema;
    expect(flex.arguments).toContain('storage_authentication_type');
    expect(flex.arguments).not.toContain('key_vault_reference_identity_id');
    expect(undocumented({ key_vault_reference_identity_id: 'x' }, flex, flex.arguments, 'app', true)).toEqual(
      ['app.key_vault_reference_identity_id'],
    );
    expect(fixture.providers.azurerm?.provider.blocks.storage).toContain('data_plane_available');
  });
});
