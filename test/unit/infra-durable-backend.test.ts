// The Durable backend is a deployment choice: Azure Storage (host.json's, the default) or the Durable Task
// Scheduler. Both templates must create the scheduler, its task hub and the app identity's role on that
// task hub only when it is chosen, take the role from infra/azure-roles.json at the task hub's scope, and
// switch the provider with app settings that override host.json, the same in Bicep and Terraform. The
// Bicep is read as text and the Terraform through HCL's parser: neither CLI can be installed here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bicepAppSettings,
  bicepDurableTaskSchedulerSettings,
  bicepModuleParams,
  bicepParams,
  read,
  terraformAppSettings,
  terraformFiles,
  terraformLocal,
  terraformVariables,
  type AppSettings,
  type Hcl,
} from '../support/infra-templates.js';

const root = join(import.meta.dirname, '..', '..');
const roles = JSON.parse(readFileSync(join(root, 'infra', 'azure-roles.json'), 'utf8')) as {
  roles: Record<string, string>;
  durableTaskRoles: { assignments: { identity: string; role: string; scope: string; when: string }[] };
};
const host = JSON.parse(read('host.json')) as {
  extensionBundle: { id: string; version: string };
  extensions: { durableTask: { hubName: string; storageProvider: Record<string, unknown> } };
};

const PROVIDER = 'AzureFunctionsJobHost__extensions__durableTask__storageProvider__';
const SCHEDULER_TYPE = 'Microsoft.DurableTask/schedulers';
const TASK_HUB_TYPE = 'Microsoft.DurableTask/schedulers/taskHubs';
const ROLE = 'Durable Task Data Contributor';

const bicepMain = read('infra/bicep/main.bicep');
const bicepModule = read('infra/bicep/modules/durable-task-scheduler.bicep');
const functionApp = read('infra/bicep/modules/function-app.bicep');

/** Every `resource <symbol> '<type>@<version>'` of a Bicep file: symbol → type. */
function bicepResources(text: string): Map<string, string> {
  return new Map(
    [...text.matchAll(/^resource (\w+) '([^'@]+)@[^']+'/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
}

/** The `resource <symbol> ... = { ... }` block of a Bicep file (to the next top-level line). */
function bicepBlock(text: string, symbol: string): string {
  const start = text.search(new RegExp(`^resource ${symbol} `, 'm'));
  if (start < 0) throw new Error(`no resource ${symbol}`);
  const end = text.indexOf('\n}\n', start);
  return text.slice(start, end + 2);
}

describe('the role table', () => {
  it("holds the Durable Task Data Contributor's published ID, assigned to the app identity on the task hub, with the scheduler only", () => {
    expect(roles.roles[ROLE]).toBe('0ad04412-c4d5-4796-b79c-f76d14c8d402');
    expect(roles.durableTaskRoles.assignments).toEqual([
      { identity: 'functionApp', role: ROLE, scope: 'taskHub', when: 'DurableTaskScheduler' },
    ]);
  });
});

describe('Bicep', () => {
  const main = bicepParams('infra/bicep/main.bicep');

  it('chooses the backend with durableBackend, Azure Storage by default, and sizes the scheduler with its SKU and capacity', () => {
    expect(main.get('durableBackend')).toEqual({ type: 'string', defaultText: "'AzureStorage'" });
    expect(bicepMain).toMatch(
      /@allowed\(\['AzureStorage', 'DurableTaskScheduler'\]\)\nparam durableBackend /,
    );
    expect(main.get('durableTaskSchedulerSku')).toEqual({ type: 'string', defaultText: "'Consumption'" });
    expect(bicepMain).toMatch(/@allowed\(\['Consumption', 'Dedicated'\]\)\nparam durableTaskSchedulerSku /);
    expect(bicepMain).toMatch(/@minValue\(1\)\n@maxValue\(3\)\nparam durableTaskSchedulerCapacity int = 1/);
    expect(bicepMain).toMatch(/@minValue\(1\)\n@maxValue\(16\)\nparam durablePartitionCount int = 4/);
    expect(bicepMain).toMatch(/^var durableTaskScheduler = durableBackend == 'DurableTaskScheduler'$/m);
  });

  it('deploys the scheduler module only when the scheduler is chosen, and the app after it', () => {
    expect(bicepMain).toMatch(
      /^module durableBackendScheduler 'modules\/durable-task-scheduler\.bicep' = if \(durableTaskScheduler\) \{$/m,
    );
    const passed = bicepModuleParams('infra/bicep/main.bicep', 'durableBackendScheduler');
    expect(passed.get('taskHubName')).toBe('durableTaskHubName');
    expect(passed.get('skuName')).toBe('durableTaskSchedulerSku');
    expect(passed.get('capacity')).toBe('durableTaskSchedulerCapacity');
    expect(passed.get('functionPrincipalId')).toBe('functionIdentity.outputs.principalId');
    expect(bicepMain).toMatch(/dependsOn: \[rbac, durableBackendScheduler\]/);
    const app = bicepModuleParams('infra/bicep/main.bicep', 'functionApp');
    expect(app.get('durableBackend')).toBe('durableBackend');
    expect(app.get('durableTaskSchedulerEndpoint')).toBe(
      "durableTaskScheduler ? durableBackendScheduler.outputs.endpoint : ''",
    );
    expect(app.get('durablePartitionCount')).toBe('durablePartitionCount');
  });

  it('declares the scheduler, its task hub and the role in that module and nowhere else', () => {
    expect([...bicepResources(bicepModule).values()].sort()).toEqual(
      ['Microsoft.Authorization/roleAssignments', SCHEDULER_TYPE, TASK_HUB_TYPE].sort(),
    );
    for (const file of [
      'infra/bicep/main.bicep',
      'infra/bicep/modules/rbac.bicep',
      'infra/bicep/modules/function-app.bicep',
    ])
      expect(read(file), file).not.toMatch(/Microsoft\.DurableTask\//);
    const taskHub = bicepBlock(bicepModule, 'taskHub');
    expect(taskHub).toMatch(/parent: scheduler/);
    expect(taskHub).toMatch(/name: taskHubName/);
    // Capacity only on the Dedicated SKU.
    expect(bicepBlock(bicepModule, 'scheduler')).toMatch(
      /sku: skuName == 'Dedicated' \? \{ name: skuName, capacity: capacity \} : \{ name: skuName \}/,
    );
  });

  it("assigns the table's role to the app identity at the task hub's scope, not the scheduler's", () => {
    expect(bicepModule).toMatch(/loadJsonContent\('\.\.\/\.\.\/azure-roles\.json', '\$\.roles'\)/);
    expect(bicepModule).toMatch(new RegExp(`builtInRoles\\['${ROLE}'\\]`));
    const assignment = bicepBlock(bicepModule, 'functionTaskHub');
    expect(assignment).toMatch(/^ {2}scope: taskHub$/m);
    expect(assignment).toMatch(/principalId: functionPrincipalId/);
    expect(assignment).toMatch(/principalType: 'ServicePrincipal'/);
    expect(assignment).toMatch(
      /roleDefinitionId: subscriptionResourceId\('Microsoft\.Authorization\/roleDefinitions', durableTaskDataContributor\)/,
    );
  });

  it('adds the scheduler settings only with that backend', () => {
    expect(functionApp).toMatch(
      /properties: union\(appSettings, durableBackend == 'DurableTaskScheduler' \? durableTaskSchedulerSettings : \{\}\)/,
    );
  });
});

describe('Terraform', () => {
  let files: Hcl[];
  let resources: Record<string, Record<string, Hcl[]>>;
  const first = (type: string, name: string): Hcl => {
    const block = resources[type]?.[name]?.[0];
    if (!block) throw new Error(`no ${type}.${name}`);
    return block;
  };

  beforeAll(async () => {
    files = await terraformFiles();
    resources = {};
    for (const file of files)
      for (const [type, byName] of Object.entries((file.resource as Hcl | undefined) ?? {}))
        resources[type] = { ...resources[type], ...(byName as Record<string, Hcl[]>) };
  });

  it('chooses the backend with durable_backend, Azure Storage by default, with the same inputs as Bicep', () => {
    const variables = terraformVariables(files);
    expect(variables.get('durable_backend')).toEqual({ default: 'AzureStorage' });
    expect(variables.get('durable_task_scheduler_sku')).toEqual({ default: 'Consumption' });
    expect(variables.get('durable_task_scheduler_capacity')).toEqual({ default: 1 });
    expect(variables.get('durable_task_scheduler_ip_allowlist')).toEqual({ default: ['0.0.0.0/0'] });
    expect(variables.get('durable_partition_count')).toEqual({ default: 4 });
    expect(terraformLocal(files, 'durable_task_scheduler')).toBe(
      '${var.durable_backend == "DurableTaskScheduler"}',
    );
  });

  it('creates the scheduler, its task hub and the role only when the scheduler is chosen', () => {
    const only = '${local.durable_task_scheduler ? 1 : 0}';
    const scheduler = first('azapi_resource', 'durable_task_scheduler');
    const taskHub = first('azapi_resource', 'durable_task_hub');
    const role = first('azurerm_role_assignment', 'function_durable_task_hub');
    for (const block of [scheduler, taskHub, role]) expect(block.count).toBe(only);
    expect(scheduler.type).toBe(`${SCHEDULER_TYPE}@2026-02-01`);
    expect(taskHub.type).toBe(`${TASK_HUB_TYPE}@2026-02-01`);
    expect(taskHub.parent_id).toBe('${azapi_resource.durable_task_scheduler[0].id}');
    expect(taskHub.name).toBe('${var.durable_task_hub_name}');
    expect(Object.keys(resources.azapi_resource ?? {}).sort()).toEqual([
      'durable_task_hub',
      'durable_task_scheduler',
    ]);
    // Capacity only on the Dedicated SKU.
    const sku = String(((scheduler.body as Hcl).properties as Hcl).sku);
    expect(sku).toMatch(
      /capacity = var\.durable_task_scheduler_capacity \} : key => value if var\.durable_task_scheduler_sku == "Dedicated"/,
    );
  });

  it("assigns the table's role to the app identity at the task hub's scope, not the scheduler's", () => {
    const role = first('azurerm_role_assignment', 'function_durable_task_hub');
    expect(role.scope).toBe('${azapi_resource.durable_task_hub[0].id}');
    expect(role.role_definition_id).toBe(
      `\${local.role_definition_prefix}\${local.built_in_roles["${ROLE}"]}`,
    );
    expect(role.principal_id).toBe('${azurerm_user_assigned_identity.function.principal_id}');
    expect(role.principal_type).toBe('ServicePrincipal');
    const app = first('azurerm_function_app_flex_consumption', 'app');
    expect(String(app.depends_on)).toContain('azurerm_role_assignment.function_durable_task_hub');
  });

  it('adds the scheduler settings only with that backend, to the provider and to the PUT that owns them', () => {
    expect(String(terraformLocal(files, 'function_app_settings'))).toMatch(
      /merge\(\s*local\.app_settings,\s*local\.durable_partition_app_settings,\s*\{ for name, value in local\.durable_task_scheduler_app_settings : name => value if local\.durable_task_scheduler \},\s*\)/,
    );
    expect(first('azurerm_function_app_flex_consumption', 'app').app_settings).toBe(
      '${local.function_app_settings}',
    );
    const put = first('azapi_resource_action', 'app_settings');
    expect(String((put.body as Hcl).properties)).toMatch(/^\$\{merge\(local\.function_app_settings,/);
  });
});

describe('the app settings switch the provider, the same in both templates', () => {
  let terraformOnly: AppSettings;
  let terraformAll: AppSettings;
  const bicepOnly = bicepDurableTaskSchedulerSettings();
  const bicepAll = bicepAppSettings();

  beforeAll(async () => {
    const files = await terraformFiles();
    terraformAll = terraformAppSettings(files);
    terraformOnly = new Map(
      Object.entries(terraformLocal(files, 'durable_task_scheduler_app_settings') as Record<string, string>),
    );
  });

  it('with the scheduler: the azureManaged provider and its identity-based connection', () => {
    const names = [
      `${PROVIDER}type`,
      `${PROVIDER}connectionStringName`,
      'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
    ];
    expect([...bicepOnly.keys()].sort()).toEqual(names.sort());
    expect([...terraformOnly.keys()].sort()).toEqual(names.sort());
    expect(bicepOnly.get(`${PROVIDER}type`)).toBe("'azureManaged'");
    expect(terraformOnly.get(`${PROVIDER}type`)).toBe('azureManaged');
    expect(bicepOnly.get(`${PROVIDER}connectionStringName`)).toBe(
      "'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'",
    );
    expect(terraformOnly.get(`${PROVIDER}connectionStringName`)).toBe(
      'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
    );
    // Endpoint, managed identity, and the user-assigned identity's client ID: no key exists to leak.
    expect(bicepOnly.get('DURABLE_TASK_SCHEDULER_CONNECTION_STRING')).toBe(
      "'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'",
    );
    expect(terraformOnly.get('DURABLE_TASK_SCHEDULER_CONNECTION_STRING')).toBe(
      'Endpoint=${try(azapi_resource.durable_task_scheduler[0].output.properties.endpoint, "")};Authentication=ManagedIdentity;ClientID=${azurerm_user_assigned_identity.function.client_id}',
    );
  });

  it("without it: no provider type of their own, so host.json's Azure Storage holds, with the partition count an input", () => {
    const base = (all: AppSettings, only: AppSettings) =>
      [...all.keys()].filter((name) => name.startsWith(PROVIDER) && !only.has(name));
    expect(base(bicepAll, bicepOnly)).toEqual([`${PROVIDER}partitionCount`]);
    expect(base(terraformAll, terraformOnly)).toEqual([`${PROVIDER}partitionCount`]);
    expect(bicepAll.get(`${PROVIDER}partitionCount`)).toBe('string(durablePartitionCount)');
    expect(terraformAll.get(`${PROVIDER}partitionCount`)).toBe('${tostring(var.durable_partition_count)}');
    expect(host.extensions.durableTask.storageProvider['type']).toBe('AzureStorage');
    expect(host.extensions.durableTask.storageProvider['partitionCount']).toBe(4);
  });

  it('names the one task hub through DURABLE_TASK_HUB, for either backend', () => {
    expect(host.extensions.durableTask.hubName).toBe('%DURABLE_TASK_HUB%');
    expect(bicepAll.get('DURABLE_TASK_HUB')).toBe('durableTaskHubName');
    expect(bicepModuleParams('infra/bicep/main.bicep', 'durableBackendScheduler').get('taskHubName')).toBe(
      'durableTaskHubName',
    );
  });

  it("keeps the GA extension bundle's v4 range, which carries the scheduler provider (docs/cost.md)", () => {
    expect(host.extensionBundle).toEqual({
      id: 'Microsoft.Azure.Functions.ExtensionBundle',
      version: '[4.*, 5.0.0)',
    });
  });
});

describe('azd', () => {
  const azdParams = read('infra/azd/main.bicepparam');
  const passes = bicepModuleParams('infra/azd/main.bicep', 'app');

  it('passes the backend choice from its environment, at the same defaults', () => {
    for (const [param, variable, fallback] of [
      ['durableBackend', 'DURABLE_BACKEND', "'AzureStorage'"],
      ['durableTaskSchedulerSku', 'DURABLE_TASK_SCHEDULER_SKU', "'Consumption'"],
      ['durableTaskSchedulerCapacity', 'DURABLE_TASK_SCHEDULER_CAPACITY', "'1'"],
      ['durablePartitionCount', 'DURABLE_PARTITION_COUNT', "'4'"],
    ] as const) {
      expect(passes.get(param), param).toBe(param);
      expect(azdParams).toMatch(
        new RegExp(
          `^param ${param} = (?:int\\()?readEnvironmentVariable\\('${variable}', ${fallback}\\)`,
          'm',
        ),
      );
    }
  });
});
