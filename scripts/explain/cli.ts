// `nodeclaim-azure explain` (also `kubectl nodeclaim-azure explain`, the same program as a kubectl plugin)
// asks the function app why: why a pod is pending or where it went, why a node is kept or was disrupted,
// what a NodePool's passes and windows decided, or what a NodePool change would do. Run by the shims in
// bin/; the parsing and the run are functions so the tests drive them without a process.
import { renderWhatIf, type WhatIfAnswer } from '../../shared/lifecycle/explain/what-if.js';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import {
  renderAnswer,
  type ExplainAnswer,
  type ExplainSubject,
} from '../../shared/decisions/explain/explain-answer.js';
import { ExplainRequestError, getExplanation, postWhatIf, type ExplainClient } from './client.js';
import { TokenError, tokenProvider, type TokenSource } from './token.js';

export type OutputFormat = 'text' | 'json';

export type CliCommand =
  | { kind: 'help'; text: string }
  | {
      kind: 'explain';
      /** Absent only for a what-if without a subject. */
      subject?: ExplainSubject;
      /** The manifest file of a what-if (`-` for standard input). */
      whatIf?: { file: string };
      url: string;
      token: TokenSource;
      output: OutputFormat;
    };

/** A command line that cannot run, with what to do instead. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const DEFAULT_PROGRAM = 'nodeclaim-azure';

export function helpText(program = DEFAULT_PROGRAM): string {
  return `Ask the nodeclaim-azure function app why it decided what it did.

Usage:
  ${program} explain pod <namespace>/<name>
      why a pod is pending, or where it was placed
  ${program} explain node <name>
      why a node (a Node's or a NodeClaim's name) is kept, or what disrupted it
  ${program} explain nodepool <name>
      what a NodePool's newest disruption pass and recent provisioning windows decided
  ${program} explain [nodepool <name>] --what-if -f <manifest>
      what applying a NodePool change would do (-f - reads stdin; a subject must be the manifest's)

Options:
  --url <url>              the function app, e.g. https://my-app.azurewebsites.net  [NODECLAIM_EXPLAIN_URL]
  --token <token>          a bearer token for the app                              [NODECLAIM_EXPLAIN_TOKEN]
  --audience <uri>         the app's Entra ID audience: without --token, a token for
                           <audience>/.default from your Azure sign-in (az login)  [NODECLAIM_EXPLAIN_AUDIENCE]
  -o, --output text|json   text (default), or the answer as JSON
  -n, --namespace <ns>     the pod's namespace, when the pod is given as <name> alone
  -f, --filename <file>    the manifest for --what-if
  -h, --help               this help

Examples:
  ${program} explain pod shop/web-0
  ${program} explain node aks-general-abc12 -o json
  ${program} explain nodepool general --url https://my-app.azurewebsites.net
  ${program} explain --what-if -f nodepool.yaml
`;
}

const KINDS: Record<string, ExplainSubject['kind']> = {
  pod: 'pod',
  pods: 'pod',
  po: 'pod',
  node: 'node',
  nodes: 'node',
  no: 'node',
  nodeclaim: 'node',
  nodeclaims: 'node',
  nodepool: 'nodepool',
  nodepools: 'nodepool',
};

const VALUE_FLAGS: Record<string, string> = {
  '--url': 'url',
  '--token': 'token',
  '--audience': 'audience',
  '--output': 'output',
  '-o': 'output',
  '--namespace': 'namespace',
  '-n': 'namespace',
  '--filename': 'filename',
  '-f': 'filename',
};

/** The command a command line asks for; throws UsageError saying what to do when it cannot run. */
export function parseArguments(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  program = DEFAULT_PROGRAM,
): CliCommand {
  const again = `run ${program} explain --help`;
  const values = new Map<string, string>();
  const positionals: string[] = [];
  let help = false;
  let whatIf = false;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index]!;
    if (argument === '-h' || argument === '--help') {
      help = true;
      continue;
    }
    if (argument === '--what-if') {
      whatIf = true;
      continue;
    }
    if (argument === '-' || !argument.startsWith('-')) {
      positionals.push(argument);
      continue;
    }
    const equals = argument.indexOf('=');
    const flag = equals >= 0 ? argument.slice(0, equals) : argument;
    const name = VALUE_FLAGS[flag];
    if (!name) throw new UsageError(`Unknown option ${flag}: ${again}`);
    const value = equals >= 0 ? argument.slice(equals + 1) : argv[++index];
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value: ${again}`);
    values.set(name, value);
  }

  const [command, kindWord, name, ...extra] = positionals;
  if (help || command === undefined || command === 'help') return { kind: 'help', text: helpText(program) };
  if (command !== 'explain') {
    throw new UsageError(
      `Unknown command "${command}": the command is explain (${program} explain pod <ns>/<name>); ${again}`,
    );
  }
  if (extra.length > 0)
    throw new UsageError(`Unexpected "${extra.join(' ')}": explain takes one subject; ${again}`);

  let subject: ExplainSubject | undefined;
  if (kindWord !== undefined) subject = parseSubject(kindWord, name, values.get('namespace'), again);
  else if (!whatIf) {
    throw new UsageError(
      `What should be explained? Give pod <namespace>/<name>, node <name> or nodepool <name>; ${again}`,
    );
  }
  if (whatIf && subject?.kind === 'node') {
    throw new UsageError(
      `--what-if tries a NodePool (or pod) manifest; a node has none: explain node ${subject.name} alone`,
    );
  }
  if (values.has('namespace') && subject?.kind !== 'pod') {
    throw new UsageError(`-n/--namespace is for a pod; a ${subject?.kind ?? 'what-if'} has no namespace`);
  }
  const file = values.get('filename');
  if (whatIf && file === undefined)
    throw new UsageError(`--what-if needs the manifest: -f <file> (or -f - for stdin)`);
  if (!whatIf && file !== undefined)
    throw new UsageError(`-f is for --what-if: add --what-if to ask what the manifest would do`);

  const output = values.get('output') ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new UsageError(`--output is text or json, not "${output}"`);

  const url = values.get('url') ?? nonEmpty(env['NODECLAIM_EXPLAIN_URL']);
  if (url === undefined) {
    throw new UsageError(
      `Which function app? Pass --url https://<app>.azurewebsites.net or set NODECLAIM_EXPLAIN_URL (its host: az functionapp show -g <group> -n <app> --query defaultHostName -o tsv)`,
    );
  }
  if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) {
    throw new UsageError(
      `--url must be the app's http(s) URL, e.g. https://my-app.azurewebsites.net, not "${url}"`,
    );
  }

  const token = values.get('token') ?? nonEmpty(env['NODECLAIM_EXPLAIN_TOKEN']);
  const audience = values.get('audience') ?? nonEmpty(env['NODECLAIM_EXPLAIN_AUDIENCE']);
  let source: TokenSource;
  if (token !== undefined) source = { kind: 'given', token };
  else if (audience !== undefined) source = { kind: 'azure', audience };
  else {
    throw new UsageError(
      `How to sign in? Pass --audience <the app's Entra ID audience, e.g. api://nodeclaim-azure-explain> (or set NODECLAIM_EXPLAIN_AUDIENCE) to use your az login, or pass --token (NODECLAIM_EXPLAIN_TOKEN)`,
    );
  }

  return {
    kind: 'explain',
    ...(subject ? { subject } : {}),
    ...(whatIf && file !== undefined ? { whatIf: { file } } : {}),
    url,
    token: source,
    output,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function parseSubject(
  kindWord: string,
  name: string | undefined,
  namespace: string | undefined,
  again: string,
): ExplainSubject {
  const kind = KINDS[kindWord.toLowerCase()];
  if (!kind) throw new UsageError(`Cannot explain a "${kindWord}": explain pod, node or nodepool; ${again}`);
  if (name === undefined || name === '') {
    const example = kind === 'pod' ? '<namespace>/<name>' : '<name>';
    throw new UsageError(`Which ${kind}? Give it as ${kind} ${example}`);
  }
  if (kind !== 'pod') {
    if (name.includes('/'))
      throw new UsageError(`A ${kind} has no namespace: give its name alone, not "${name}"`);
    return { kind, name };
  }
  const slash = name.indexOf('/');
  if (slash >= 0) {
    const podNamespace = name.slice(0, slash);
    const podName = name.slice(slash + 1);
    if (podNamespace === '' || podName === '' || podName.includes('/')) {
      throw new UsageError(`Give the pod as <namespace>/<name>, e.g. shop/web-0, not "${name}"`);
    }
    if (namespace !== undefined && namespace !== podNamespace) {
      throw new UsageError(
        `The pod's namespace is given twice, "${podNamespace}" and -n ${namespace}: give one`,
      );
    }
    return { kind, namespace: podNamespace, name: podName };
  }
  if (namespace === undefined) {
    throw new UsageError(
      `Which namespace is pod "${name}" in? Give it as <namespace>/${name}, or add -n <namespace>`,
    );
  }
  return { kind, namespace, name };
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** A file's text; `-` is standard input. */
  readText: (file: string) => Promise<string>;
  fetch?: typeof fetch;
}

/** Runs a command line; the exit code: 0 answered, 1 the request failed, 2 the command line is wrong. */
export async function runCli(argv: readonly string[], io: CliIo, program = DEFAULT_PROGRAM): Promise<number> {
  let command: CliCommand;
  try {
    command = parseArguments(argv, io.env, program);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (command.kind === 'help') {
    io.stdout(command.text);
    return 0;
  }

  const client: ExplainClient = {
    url: command.url,
    token: tokenProvider(command.token),
    ...(io.fetch ? { fetch: io.fetch } : {}),
  };
  try {
    if (command.whatIf) {
      let manifest: string;
      try {
        manifest = await io.readText(command.whatIf.file);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        io.stderr(`error: cannot read the manifest ${command.whatIf.file} (${reason}): check the -f path\n`);
        return 2;
      }
      if (manifest.trim() === '') {
        io.stderr(`error: the manifest ${command.whatIf.file} is empty\n`);
        return 2;
      }
      const mismatch = manifestMismatch(manifest, command.subject);
      if (mismatch) {
        io.stderr(`error: ${command.whatIf.file}: ${mismatch}\n`);
        return 2;
      }
      const answer = await postWhatIf(client, manifestObjects(manifest));
      io.stdout(
        command.output === 'json'
          ? `${JSON.stringify(answer, null, 2)}\n`
          : isWhatIfAnswer(answer)
            ? renderWhatIf(answer)
            : renderUnknown(answer),
      );
      return 0;
    }
    const answer = await getExplanation(client, command.subject!);
    io.stdout(command.output === 'json' ? `${JSON.stringify(answer, null, 2)}\n` : renderUnknown(answer));
    return 0;
  } catch (error) {
    if (error instanceof ExplainRequestError || error instanceof TokenError) {
      io.stderr(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

const MANIFEST_KINDS: Record<string, string> = { pod: 'Pod', nodepool: 'NodePool' };

/**
 * Why the manifest cannot be what the command line says it is (not YAML or JSON, or no object of the
 * subject's kind and name in it), checked before anything is sent; undefined when it can.
 */
export function manifestMismatch(manifest: string, subject: ExplainSubject | undefined): string | undefined {
  const objects: { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } }[] = [];
  for (const document of parseAllDocuments(manifest)) {
    const problem = document.errors[0];
    if (problem) return `not YAML or JSON (${problem.message.split('\n')[0]})`;
    const value: unknown = document.toJS();
    if (value && typeof value === 'object' && !Array.isArray(value)) objects.push(value);
  }
  if (objects.length === 0) return 'no Kubernetes object in it';
  if (!subject) return undefined;
  const kind = MANIFEST_KINDS[subject.kind];
  const found = objects.some(
    (object) =>
      object.kind === kind &&
      object.metadata?.name === subject.name &&
      (subject.kind !== 'pod' || (object.metadata.namespace ?? subject.namespace) === subject.namespace),
  );
  return found
    ? undefined
    : `no ${kind} ${describeName(subject)} in it: the subject given must be the manifest's`;
}

/** The manifest's objects, a `kind: List`'s items among them (as kubectl apply takes them). */
export function manifestObjects(manifest: string): unknown[] {
  const objects: unknown[] = [];
  for (const document of parseAllDocuments(manifest)) {
    const value: unknown = document.toJS();
    if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
    const list = value as { kind?: unknown; items?: unknown };
    if (list.kind === 'List' && Array.isArray(list.items)) objects.push(...list.items);
    else objects.push(value);
  }
  return objects;
}

function isWhatIfAnswer(value: unknown): value is WhatIfAnswer {
  if (!value || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    Array.isArray(record['changes']) && Array.isArray(record['drift']) && Array.isArray(record['notComputed'])
  );
}

function describeName(subject: ExplainSubject): string {
  return subject.kind === 'pod' ? `${subject.namespace}/${subject.name}` : subject.name;
}

function isExplainAnswer(value: unknown): value is ExplainAnswer {
  if (!value || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record['summary'] === 'string' &&
    (record['kind'] === 'pod' || record['kind'] === 'node' || record['kind'] === 'nodepool')
  );
}

/**
 * An answer as text: an explain answer through renderAnswer; anything else (a what-if's answer, or an app
 * newer than this CLI) as indented `key: value` lines, its summary first when it has one.
 */
export function renderUnknown(value: unknown): string {
  if (isExplainAnswer(value)) return renderAnswer(value);
  const lines: string[] = [];
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const summary = record['summary'];
    if (typeof summary === 'string') lines.push(`Summary:  ${summary}`);
    const rest = Object.fromEntries(Object.entries(record).filter(([key]) => key !== 'summary'));
    lines.push(...plainLines(rest, ''));
  } else {
    lines.push(...plainLines(value, ''));
  }
  return `${lines.join('\n')}\n`;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function plainLines(value: unknown, indent: string): string[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${indent}(none)`];
    return value.flatMap((item) => {
      if (item && typeof item === 'object') {
        const [first = '', ...rest] = plainLines(item, `${indent}  `);
        return [`${indent}- ${first.trimStart()}`, ...rest];
      }
      return [`${indent}- ${scalar(item)}`];
    });
  }
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
      item && typeof item === 'object' && (!Array.isArray(item) || item.length > 0)
        ? [`${indent}${key}:`, ...plainLines(item, `${indent}  `)]
        : [`${indent}${key}: ${Array.isArray(item) ? '(none)' : scalar(item)}`],
    );
  }
  return [`${indent}${scalar(value)}`];
}

/** The process's side: the shims call this with the name the program was run as. */
export async function main(program = DEFAULT_PROGRAM): Promise<void> {
  process.exitCode = await runCli(
    process.argv.slice(2),
    {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      readText: (file) => (file === '-' ? readStdin() : readFile(file, 'utf8')),
    },
    program,
  );
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}
