// Every built-in role definition ID the templates assign comes from one table, infra/azure-roles.json,
// which Bicep reads with loadJsonContent and Terraform with jsondecode(file()). A GUID typed into a
// template (as the Storage Blob Data Owner ID once was, wrong in its last group) fails here, before a
// deployment fails on a role assignment and never creates the Function App that depends on it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface RoleTable {
  source: string;
  roles: Record<string, string>;
}
const table = JSON.parse(read('infra/azure-roles.json')) as RoleTable;

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(extension))
    .map((file) => relative(root, join(root, dir, file)));
}
const bicepFiles = filesUnder('infra/bicep', '.bicep');
const terraformFiles = filesUnder('infra/terraform', '.tf');

const guid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** GUIDs in the templates that are not role definitions. */
const otherGuids = new Map([
  [
    '6dae42f8-4368-4678-94ff-3960e28e3630',
    'the AKS AAD server application (KUBE_TOKEN_SCOPE), the same in every tenant',
  ],
]);

/** Names looked up in the table: builtInRoles['…'] / loadJsonContent(…)['…'] in Bicep, built_in_roles["…"] in Terraform. */
function bicepRoleNames(text: string): string[] {
  return [...text.matchAll(/(?:builtInRoles|'\$\.roles'\))\['([^']+)'\]/g)].map((m) => m[1] as string);
}
function terraformRoleNames(text: string): string[] {
  return [...text.matchAll(/local\.built_in_roles\["([^"]+)"\]/g)].map((m) => m[1] as string);
}

describe('the role table', () => {
  it("names Microsoft's list as its source and holds one well-formed, distinct ID per role", () => {
    expect(table.source).toBe('https://learn.microsoft.com/azure/role-based-access-control/built-in-roles');
    const ids = Object.values(table.roles);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has the published IDs of the storage roles the Functions host needs', () => {
    // From the Storage page of the built-in roles list; the first of these was once typed wrong.
    expect(table.roles['Storage Blob Data Owner']).toBe('b7e6dc6d-f1e8-4753-8033-0f276bb0955b');
    expect(table.roles['Storage Queue Data Contributor']).toBe('974c5e8b-45b9-4653-ba55-5f855dd0fb88');
    expect(table.roles['Storage Table Data Contributor']).toBe('0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3');
  });

  it('is used: every role in it is assigned by at least one template', () => {
    const used = new Set([
      ...bicepFiles.flatMap((file) => bicepRoleNames(read(file))),
      ...terraformFiles.flatMap((file) => terraformRoleNames(read(file))),
      ...[...read('infra/terraform/rbac.tf').matchAll(/^\s*"([^"]+)",$/gm)].map((m) => m[1] as string),
    ]);
    expect(Object.keys(table.roles).filter((name) => !used.has(name))).toEqual([]);
  });
});

describe.each([
  ['Bicep', bicepFiles],
  ['Terraform', terraformFiles],
])('%s templates', (_tool, files) => {
  it('write no role definition ID themselves (every GUID is a known non-role one)', () => {
    const typed = files.flatMap((file) =>
      [...read(file).matchAll(guid)]
        .map((m) => m[0].toLowerCase())
        .filter((id) => !otherGuids.has(id))
        .map((id) => `${file}: ${id}`),
    );
    expect(typed).toEqual([]);
  });
});

describe('Bicep', () => {
  it('reads the table and looks up only roles it has', () => {
    const names = bicepFiles.flatMap((file) => bicepRoleNames(read(file)));
    expect(names).toContain('Storage Blob Data Owner');
    expect(names.filter((name) => !(name in table.roles))).toEqual([]);
    for (const file of bicepFiles.filter((f) => bicepRoleNames(read(f)).length > 0)) {
      expect(read(file), file).toMatch(/loadJsonContent\('(\.\.\/)+azure-roles\.json', '\$\.roles'\)/);
    }
  });

  it('builds every roleDefinitionId from the table or from a custom role defined in the template', () => {
    for (const file of bicepFiles) {
      const text = read(file);
      for (const m of text.matchAll(/roleDefinitionId:\s*/g)) {
        const start = (m.index ?? 0) + m[0].length;
        const rest = text.slice(start);
        const expression = rest.startsWith('subscriptionResourceId(')
          ? rest.slice(0, rest.indexOf(')') + 1).replace(/\s+/g, ' ')
          : rest.slice(0, rest.indexOf('\n'));
        // A custom roleDefinitions resource of the template, or its ID passed to a module.
        if (/^\w+Role\.id$|^\w+RoleId$/.test(expression)) continue;
        expect(expression, file).toMatch(
          /^subscriptionResourceId\( ?'Microsoft\.Authorization\/roleDefinitions', ?[\w.]+ ?\)$/,
        );
      }
    }
  });
});

describe('Terraform', () => {
  const main = read('infra/terraform/main.tf');

  it('reads the table and looks up only roles it has', () => {
    expect(main).toMatch(
      /built_in_roles\s*=\s*jsondecode\(file\("\$\{path\.module\}\/\.\.\/azure-roles\.json"\)\)\.roles/,
    );
    const names = terraformFiles.flatMap((file) => terraformRoleNames(read(file)));
    const storageRoles = [...read('infra/terraform/rbac.tf').matchAll(/^\s*"(Storage [^"]+)",$/gm)].map(
      (m) => m[1] as string,
    );
    expect(storageRoles).toHaveLength(3);
    expect([...names, ...storageRoles].filter((name) => !(name in table.roles))).toEqual([]);
  });

  it('assigns by ID from the table or a custom role, never by display name', () => {
    for (const file of terraformFiles) {
      const text = read(file);
      expect(text, file).not.toMatch(/role_definition_name\s*=/);
      for (const m of text.matchAll(/role_definition_id\s*=\s*(.+)/g)) {
        expect(m[1], file).toMatch(
          /^"\$\{local\.role_definition_prefix\}\$\{local\.built_in_roles\[[^\]]+\]\}"$|^azurerm_role_definition\.\w+\.role_definition_resource_id$/,
        );
      }
    }
  });
});

interface CustomRole {
  roleName: string;
  description: string;
  assignedAt: 'nodeResourceGroup' | 'subscription' | 'nodeSubnet';
  actions: string[];
}
const customRoles = (
  JSON.parse(read('infra/azure-roles.json')) as { customRoles: Record<string, CustomRole> }
).customRoles;

describe('custom roles come from infra/azure-roles.json, in both templates', () => {
  const bicep = read('infra/bicep/modules/rbac.bicep');
  const terraform = read('infra/terraform/rbac.tf');

  it('neither template lists an action of its own', () => {
    for (const text of [bicep, terraform])
      expect(text).not.toMatch(/['"]Microsoft\.\w+\/[\w/]*\/(?:read|write|delete|action)['"]/);
  });

  it('each custom role is defined from the table by both', () => {
    for (const key of Object.keys(customRoles)) {
      expect(bicep).toContain(`actions: customRoles.${key}.actions`);
      expect(terraform).toContain(`actions     = local.custom_roles.${key}.actions`);
    }
  });

  it('each is assigned at the scope the table names (the scope the ARM emulator enforces)', () => {
    // Bicep: the module that assigns the role runs at the scope; Terraform: the assignment's scope.
    const bicepScope = {
      nodeResourceGroup: 'nodeRoles',
      subscription: 'computeReader',
      nodeSubnet: 'subnetRoles',
    };
    const terraformScope = {
      nodeResourceGroup: 'scope              = local.node_resource_group_id',
      subscription: 'scope              = data.azurerm_subscription.current.id',
      nodeSubnet: 'scope              = var.node_subnet_id',
    };
    const bicepDefinition = {
      vmOperator: 'vmOperatorRole',
      computeCatalogReader: 'computeReaderRole',
      capacityReservationUser: 'capacityReservationRole',
      subnetJoiner: 'subnetJoinRole',
    };
    const terraformDefinition = {
      vmOperator: 'vm_operator',
      computeCatalogReader: 'compute_catalog_reader',
      capacityReservationUser: 'capacity_reservation_user',
      subnetJoiner: 'subnet_joiner',
    };
    for (const [key, role] of Object.entries(customRoles)) {
      const bicepRole = bicepDefinition[key as keyof typeof bicepDefinition];
      const bicepAssigner = bicepScope[role.assignedAt];
      expect(bicep).toMatch(new RegExp(`(resource|module) ${bicepAssigner} [^]*?${bicepRole}\\.id`));
      const tfRole = terraformDefinition[key as keyof typeof terraformDefinition];
      const assignment = new RegExp(
        `resource "azurerm_role_assignment" "\\w+" \\{\\n  ${terraformScope[role.assignedAt].replace(/[.]/g, '\\.')}\\n  role_definition_id = azurerm_role_definition\\.${tfRole}\\.`,
      );
      expect(terraform).toMatch(assignment);
    }
  });
});
