// Validation of a virtual machine PUT body: turns untrusted JSON into a VmSpec or the ARM error the
// Compute resource provider would answer with. Pure: no I/O, no state.

import { ArmError, invalidParameter, invalidRequestContent, missingParameter } from './errors.js';

export type JsonObject = { [key: string]: unknown };

export type VmPriority = 'Regular' | 'Low' | 'Spot';

export interface VmSpec {
  location: string;
  zones: string[];
  tags: Record<string, string>;
  vmSize: string;
  priority: VmPriority;
  evictionPolicy: 'Deallocate' | 'Delete' | undefined;
  computerName: string;
  /** The bootstrap data, base64 as sent; kept for the kubelet simulator, never returned by GET. */
  customData: string | undefined;
  /** The request's `properties`, kept to echo back (minus secrets), as ARM does. */
  properties: JsonObject;
}

const maxCustomDataLength = 87380;
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;
const vmNamePattern = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9_])?$/;
const computerNamePattern = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,62})?$/;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

export function validateVmName(name: string): ArmError | undefined {
  if (vmNamePattern.test(name)) return undefined;
  return new ArmError(
    400,
    'InvalidParameter',
    `Virtual machine name '${name}' is invalid. The name can contain only alphanumeric characters, '.', '-' and ` +
      "'_', must start with an alphanumeric character, must not end with '.' or '-', and can be at most 64 characters long.",
    'vmName',
  );
}

/**
 * Parses a request body; throws ArmError 400 for anything the real API would reject. `checkImage` judges
 * the image reference against the galleries, whose versions are the emulator's state (gallery-images.ts).
 */
export function parseVmSpec(body: unknown, checkImage: (imageReference: unknown) => void): VmSpec {
  if (!isObject(body)) throw invalidRequestContent('the request body must be a JSON object');
  if (!nonEmptyString(body.location)) {
    throw new ArmError(400, 'LocationRequired', 'The location property is required for this definition.');
  }
  const location = body.location.toLowerCase().replace(/\s+/g, '');
  const tags = parseTags(body.tags);
  const zones = parseZones(body.zones);

  if (!isObject(body.properties)) throw missingParameter('properties');
  const properties = body.properties;

  if (!isObject(properties.hardwareProfile) || !nonEmptyString(properties.hardwareProfile.vmSize)) {
    throw missingParameter('hardwareProfile.vmSize');
  }
  const vmSize = properties.hardwareProfile.vmSize;

  validateStorageProfile(properties.storageProfile, checkImage);
  const { computerName, customData } = validateOsProfile(properties.osProfile);
  validateNetworkProfile(properties.networkProfile);
  const { priority, evictionPolicy } = validatePriority(properties);

  return { location, zones, tags, vmSize, priority, evictionPolicy, computerName, customData, properties };
}

function parseTags(tags: unknown): Record<string, string> {
  if (tags === undefined || tags === null) return {};
  if (!isObject(tags)) throw invalidParameter('Tags must be an object of string values.', 'tags');
  const entries = Object.entries(tags);
  if (entries.length > 50) throw invalidParameter('The number of tags exceeds the limit of 50.', 'tags');
  const result: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (typeof value !== 'string')
      throw invalidParameter(`The value of tag '${key}' must be a string.`, 'tags');
    if (key.length > 512 || value.length > 256) {
      throw invalidParameter(`Tag '${key}' exceeds the length limits (name 512, value 256).`, 'tags');
    }
    result[key] = value;
  }
  return result;
}

function parseZones(zones: unknown): string[] {
  if (zones === undefined || zones === null) return [];
  if (!Array.isArray(zones) || zones.some((z) => typeof z !== 'string')) {
    throw invalidParameter('The zones property must be an array of strings.', 'zones');
  }
  const values = zones as string[];
  if (values.length > 1) {
    throw invalidParameter('A virtual machine can be placed in at most one availability zone.', 'zones');
  }
  for (const zone of values) {
    if (!['1', '2', '3'].includes(zone)) {
      throw invalidParameter(
        `The zone(s) '${zone}' for resource 'virtualMachines' is not supported.`,
        'zones',
      );
    }
  }
  return [...values];
}

function validateStorageProfile(
  storageProfile: unknown,
  checkImage: (imageReference: unknown) => void,
): void {
  if (!isObject(storageProfile)) throw missingParameter('storageProfile');
  const osDisk = storageProfile.osDisk;
  const createOption = isObject(osDisk) ? (osDisk.createOption ?? 'FromImage') : 'FromImage';
  if (!['FromImage', 'Attach', 'Empty'].includes(String(createOption))) {
    throw invalidParameter(
      `The value '${String(createOption)}' of parameter 'createOption' is not allowed.`,
      'osDisk.createOption',
    );
  }
  if (
    isObject(osDisk) &&
    osDisk.deleteOption !== undefined &&
    !['Delete', 'Detach'].includes(String(osDisk.deleteOption))
  ) {
    throw invalidParameter(
      `The value '${String(osDisk.deleteOption)}' of parameter 'deleteOption' is not allowed.`,
      'osDisk.deleteOption',
    );
  }
  if (createOption === 'FromImage' && !isObject(storageProfile.imageReference)) {
    throw missingParameter('storageProfile.imageReference');
  }
  checkImage(storageProfile.imageReference);
}

function validateOsProfile(osProfile: unknown): { computerName: string; customData: string | undefined } {
  if (!isObject(osProfile)) throw missingParameter('osProfile');
  if (!nonEmptyString(osProfile.computerName)) throw missingParameter('osProfile.computerName');
  if (!computerNamePattern.test(osProfile.computerName)) {
    throw invalidParameter(
      `Linux host name '${osProfile.computerName}' is invalid: it can be at most 64 characters long and contain only ` +
        "letters, digits, '.' and '-'.",
      'computerName',
    );
  }
  if (!nonEmptyString(osProfile.adminUsername)) throw missingParameter('osProfile.adminUsername');
  const linux = osProfile.linuxConfiguration;
  const sshKeys = isObject(linux) && isObject(linux.ssh) ? linux.ssh.publicKeys : undefined;
  const hasSshKey = Array.isArray(sshKeys) && sshKeys.length > 0;
  if (!hasSshKey && !nonEmptyString(osProfile.adminPassword)) throw missingParameter('adminPassword');
  const customData = osProfile.customData;
  if (customData !== undefined && customData !== null) {
    if (
      typeof customData !== 'string' ||
      customData.length > maxCustomDataLength ||
      !base64Pattern.test(customData)
    ) {
      throw invalidParameter(
        `Custom data in OSProfile must be in Base64 encoding and with a maximum length of ${maxCustomDataLength} characters.`,
        'customData',
      );
    }
    return { computerName: osProfile.computerName, customData };
  }
  return { computerName: osProfile.computerName, customData: undefined };
}

function validateNetworkProfile(networkProfile: unknown): void {
  if (!isObject(networkProfile)) throw missingParameter('networkProfile');
  const references = networkProfile.networkInterfaces;
  const configurations = networkProfile.networkInterfaceConfigurations;
  const hasReferences = Array.isArray(references) && references.length > 0;
  const hasConfigurations = Array.isArray(configurations) && configurations.length > 0;
  if (!hasReferences && !hasConfigurations) {
    throw invalidParameter(
      'The virtual machine must have at least one network interface: set networkProfile.networkInterfaces or ' +
        'networkProfile.networkInterfaceConfigurations.',
      'networkProfile',
    );
  }
  if (hasReferences) {
    for (const nic of references as unknown[]) {
      if (!isObject(nic) || !nonEmptyString(nic.id))
        throw missingParameter('networkProfile.networkInterfaces.id');
    }
  }
  if (!hasConfigurations) return;
  if (!nonEmptyString(networkProfile.networkApiVersion)) {
    throw invalidParameter(
      "The property 'networkApiVersion' must be specified when 'networkInterfaceConfigurations' is used.",
      'networkProfile.networkApiVersion',
    );
  }
  for (const config of configurations as unknown[]) {
    if (!isObject(config) || !nonEmptyString(config.name))
      throw missingParameter('networkInterfaceConfigurations.name');
    const props = config.properties;
    if (!isObject(props)) throw missingParameter('networkInterfaceConfigurations.properties');
    if (props.deleteOption !== undefined && !['Delete', 'Detach'].includes(String(props.deleteOption))) {
      throw invalidParameter(
        `The value '${String(props.deleteOption)}' of parameter 'deleteOption' is not allowed.`,
        'networkInterfaceConfigurations.deleteOption',
      );
    }
    const ipConfigurations = props.ipConfigurations;
    if (!Array.isArray(ipConfigurations) || ipConfigurations.length === 0) {
      throw missingParameter('networkInterfaceConfigurations.properties.ipConfigurations');
    }
    for (const ip of ipConfigurations as unknown[]) {
      if (!isObject(ip) || !nonEmptyString(ip.name)) throw missingParameter('ipConfigurations.name');
      const subnet = isObject(ip.properties) ? ip.properties.subnet : undefined;
      if (!isObject(subnet) || !nonEmptyString(subnet.id))
        throw missingParameter('ipConfigurations.properties.subnet.id');
    }
  }
}

function validatePriority(properties: JsonObject): {
  priority: VmPriority;
  evictionPolicy: 'Deallocate' | 'Delete' | undefined;
} {
  const priority = properties.priority ?? 'Regular';
  if (priority !== 'Regular' && priority !== 'Low' && priority !== 'Spot') {
    throw invalidParameter(
      `The value '${String(priority)}' of parameter 'priority' is not allowed.`,
      'priority',
    );
  }
  const eviction = properties.evictionPolicy;
  if (priority === 'Regular') {
    if (eviction !== undefined && eviction !== null) {
      throw invalidParameter(
        "The 'evictionPolicy' can be set only for Azure Spot Virtual Machines and Azure Spot scale sets.",
        'evictionPolicy',
      );
    }
    return { priority, evictionPolicy: undefined };
  }
  if (eviction !== undefined && eviction !== 'Deallocate' && eviction !== 'Delete') {
    throw invalidParameter(
      `The value '${String(eviction)}' of parameter 'evictionPolicy' is not allowed.`,
      'evictionPolicy',
    );
  }
  const billing = properties.billingProfile;
  if (billing !== undefined && billing !== null) {
    const maxPrice = isObject(billing) ? billing.maxPrice : undefined;
    if (maxPrice !== undefined && (typeof maxPrice !== 'number' || (maxPrice < 0 && maxPrice !== -1))) {
      throw invalidParameter("The 'maxPrice' must be -1 or a positive number.", 'billingProfile.maxPrice');
    }
  }
  return { priority, evictionPolicy: eviction ?? 'Deallocate' };
}
