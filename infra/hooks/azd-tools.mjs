// Shared by the azd hooks: run a command (printing it), read azd's environment, get a kubeconfig.
// Plain Node (no dependencies): azd runs the hooks before `npm ci` may have been run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function say(line) {
  console.log(`[nodeclaim] ${line}`);
}

export function fail(message) {
  console.error(`[nodeclaim] ${message}`);
  process.exit(1);
}

/** Runs a command and returns its stdout; stops the hook with the command's error when it fails. */
export function run(command, args, options = {}) {
  if (!options.quiet) say(`$ ${command} ${args.join(' ')}`);
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  } catch (error) {
    fail(`${command} ${args[0] ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function requireTools(tools) {
  for (const [tool, versionArgs, why] of tools) {
    try {
      execFileSync(tool, versionArgs, { stdio: 'ignore' });
    } catch {
      fail(`${tool} is needed (${why}) and was not found on PATH`);
    }
  }
}

/**
 * An azd environment value or deployment output by name, whatever case azd stored it in
 * (functionPrincipalId, FUNCTIONPRINCIPALID and FUNCTION_PRINCIPAL_ID are the same name).
 */
export function output(name) {
  const wanted = name.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
  for (const [key, value] of Object.entries(process.env)) {
    if (key.replace(/[^A-Za-z0-9]/g, '').toUpperCase() === wanted && value) return value;
  }
  return undefined;
}

export function required(name, hint) {
  const value = output(name);
  if (!value) fail(`${name} is not set. ${hint}`);
  return value;
}

/** A kubeconfig for the cluster in a temporary file, using the Azure CLI login (AKS-managed Entra ID). */
export function clusterKubeconfig(resourceGroup, cluster) {
  const path = join(mkdtempSync(join(tmpdir(), 'nodeclaim-kube-')), 'config');
  run('az', [
    'aks',
    'get-credentials',
    '-g',
    resourceGroup,
    '-n',
    cluster,
    '--file',
    path,
    '--overwrite-existing',
  ]);
  run('kubelogin', ['convert-kubeconfig', '-l', 'azurecli', '--kubeconfig', path]);
  return path;
}
