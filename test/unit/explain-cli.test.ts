// The explain CLI: its command lines (what runs, and the message for one that cannot), the message for
// every HTTP failure, and whole runs against a small local HTTP server standing in for the function app
// (the path asked, the bearer token sent, the manifest posted, the answer rendered or the error said).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PodAnswer } from '../../shared/decisions/explain/explain-answer.js';
import {
  connectionErrorMessage,
  httpErrorMessage,
  subjectPath,
  type ExplainRequest,
} from '../../scripts/explain/client.js';
import {
  manifestMismatch,
  parseArguments,
  renderUnknown,
  runCli,
  UsageError,
  type CliIo,
} from '../../scripts/explain/cli.js';
import { scopeFor } from '../../scripts/explain/token.js';

const env = { NODECLAIM_EXPLAIN_URL: 'https://app.example', NODECLAIM_EXPLAIN_TOKEN: 't0ken' };

function usageError(argv: string[], environment: Record<string, string> = env): string {
  try {
    parseArguments(argv, environment);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`${argv.join(' ')} parsed`);
}

describe('command lines', () => {
  test('subjects, in their forms', () => {
    expect(parseArguments(['explain', 'pod', 'shop/web-0'], env)).toEqual({
      kind: 'explain',
      subject: { kind: 'pod', namespace: 'shop', name: 'web-0' },
      url: 'https://app.example',
      token: { kind: 'given', token: 't0ken' },
      output: 'text',
    });
    expect(parseArguments(['explain', 'po', 'web-0', '-n', 'shop'], env)).toMatchObject({
      subject: { kind: 'pod', namespace: 'shop', name: 'web-0' },
    });
    expect(parseArguments(['explain', 'nodeclaim', 'general-abc12', '-o', 'json'], env)).toMatchObject({
      subject: { kind: 'node', name: 'general-abc12' },
      output: 'json',
    });
    expect(parseArguments(['explain', 'NodePools', 'general', '--output=json'], env)).toMatchObject({
      subject: { kind: 'nodepool', name: 'general' },
      output: 'json',
    });
  });

  test('flags win over the environment; without a token, the audience for az login', () => {
    expect(
      parseArguments(['explain', 'node', 'n1', '--url', 'http://localhost:7071', '--token=flag'], env),
    ).toMatchObject({ url: 'http://localhost:7071', token: { kind: 'given', token: 'flag' } });
    expect(
      parseArguments(['explain', 'node', 'n1'], {
        NODECLAIM_EXPLAIN_URL: 'https://app.example',
        NODECLAIM_EXPLAIN_AUDIENCE: 'api://nodeclaim-explain',
      }),
    ).toMatchObject({ token: { kind: 'azure', audience: 'api://nodeclaim-explain' } });
    expect(scopeFor('api://nodeclaim-explain')).toBe('api://nodeclaim-explain/.default');
    expect(scopeFor('api://nodeclaim-explain/.default')).toBe('api://nodeclaim-explain/.default');
  });

  test('a what-if, with or without a subject', () => {
    expect(parseArguments(['explain', '--what-if', '-f', 'np.yaml'], env)).toMatchObject({
      whatIf: { file: 'np.yaml' },
    });
    expect(parseArguments(['explain', 'nodepool', 'general', '--what-if', '-f', '-'], env)).toMatchObject({
      subject: { kind: 'nodepool', name: 'general' },
      whatIf: { file: '-' },
    });
  });

  test('help, for nodeclaim-azure and as the kubectl plugin', () => {
    const help = parseArguments([], {});
    expect(help.kind).toBe('help');
    expect(parseArguments(['explain', '--help'], {})).toEqual(help);
    const plugin = parseArguments(['--help'], {}, 'kubectl nodeclaim-azure');
    expect(plugin.kind === 'help' && plugin.text).toContain(
      'kubectl nodeclaim-azure explain pod <namespace>/<name>',
    );
  });

  test.each([
    [['get', 'pod', 'a/b'], 'Unknown command "get"'],
    [['explain'], 'What should be explained? Give pod <namespace>/<name>'],
    [['explain', 'deployment', 'web'], 'Cannot explain a "deployment": explain pod, node or nodepool'],
    [['explain', 'pod'], 'Which pod? Give it as pod <namespace>/<name>'],
    [
      ['explain', 'pod', 'web-0'],
      'Which namespace is pod "web-0" in? Give it as <namespace>/web-0, or add -n',
    ],
    [['explain', 'pod', 'shop/'], 'Give the pod as <namespace>/<name>'],
    [['explain', 'pod', 'a/web', '-n', 'b'], 'namespace is given twice'],
    [['explain', 'node', 'ns/n1'], 'A node has no namespace'],
    [['explain', 'node', 'n1', '-n', 'shop'], '-n/--namespace is for a pod'],
    [['explain', 'node', 'n1', 'n2'], 'Unexpected "n2"'],
    [['explain', 'node', 'n1', '--verbose'], 'Unknown option --verbose'],
    [['explain', 'node', 'n1', '--url'], '--url needs a value'],
    [['explain', 'node', 'n1', '-o', 'yaml'], '--output is text or json, not "yaml"'],
    [['explain', '--what-if'], '--what-if needs the manifest: -f <file>'],
    [['explain', 'nodepool', 'general', '-f', 'np.yaml'], '-f is for --what-if'],
    [['explain', 'node', 'n1', '--what-if', '-f', 'np.yaml'], 'a node has none: explain node n1 alone'],
    [['explain', 'node', 'n1', '--url', 'app.example'], "--url must be the app's http(s) URL"],
  ])('%j is refused: %s', (argv, message) => {
    expect(usageError(argv)).toContain(message);
  });

  test('no URL, or no way to sign in: where to get them', () => {
    expect(usageError(['explain', 'node', 'n1'], { NODECLAIM_EXPLAIN_TOKEN: 't' })).toContain(
      'Which function app? Pass --url https://<app>.azurewebsites.net or set NODECLAIM_EXPLAIN_URL',
    );
    expect(usageError(['explain', 'node', 'n1'], { NODECLAIM_EXPLAIN_URL: 'https://a.example' })).toContain(
      'Pass --audience',
    );
  });
});

describe('HTTP failures', () => {
  const pod: ExplainRequest = { kind: 'subject', subject: { kind: 'pod', namespace: 'shop', name: 'web-0' } };
  const node: ExplainRequest = { kind: 'subject', subject: { kind: 'node', name: 'aks-1' } };

  test('401: sign in', () => {
    expect(httpErrorMessage(401, '', pod)).toContain('sign in: az login, or pass --token');
  });

  test('403: what may not be read, and the permission to ask for', () => {
    expect(httpErrorMessage(403, '{"error":"user alice may not get pods in shop"}', pod)).toBe(
      'You may not read pod shop/web-0 (403) (the app says: user alice may not get pods in shop): ask your cluster admin for get on pods in namespace shop.',
    );
    expect(httpErrorMessage(403, '', node)).toContain('ask your cluster admin for get on nodes');
    expect(httpErrorMessage(403, '', { kind: 'what-if' })).toContain('the right to apply the manifest');
  });

  test('404: nothing recorded yet, or no endpoint at this URL', () => {
    const nothing = httpErrorMessage(404, '{"error":"nothing recorded"}', pod);
    expect(nothing).toContain('Nothing recorded about pod shop/web-0 yet');
    expect(nothing).toContain('newest 200 provisioning windows and 200 disruption passes');
    expect(httpErrorMessage(404, '', pod)).toContain('the app has no explain endpoint here; check --url');
  });

  test('others: busy, failed, an HTML page not quoted', () => {
    expect(httpErrorMessage(503, '', node)).toContain('busy (503)');
    expect(httpErrorMessage(500, '<html>oops</html>', node)).toBe(
      "The app failed to answer (500): try again; if it persists, look at the function app's logs.",
    );
    expect(httpErrorMessage(400, 'not YAML', { kind: 'what-if' })).toContain('could not use the manifest');
  });

  test('connection errors name the URL', () => {
    const blocked = new TypeError('fetch failed', { cause: new Error('bad port') });
    expect(connectionErrorMessage('http://127.0.0.1:1', blocked)).toContain(
      'Could not reach http://127.0.0.1:1 (bad port)',
    );
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(connectionErrorMessage('https://app.example', refused)).toBe(
      "Could not reach https://app.example (ECONNREFUSED): check --url (NODECLAIM_EXPLAIN_URL) is the function app's URL, e.g. https://<app>.azurewebsites.net.",
    );
    expect(connectionErrorMessage('https://app.example', new DOMException('t', 'TimeoutError'))).toContain(
      'No answer from https://app.example in time',
    );
  });

  test('subject paths are escaped', () => {
    expect(subjectPath({ kind: 'pod', namespace: 'shop', name: 'web 0' })).toBe(
      '/api/explain/pod/shop/web%200',
    );
    expect(subjectPath({ kind: 'nodepool', name: 'general' })).toBe('/api/explain/nodepool/general');
  });
});

describe('a run against the app', () => {
  const answer: PodAnswer = {
    kind: 'pod',
    pod: 'shop/web-0',
    uid: 'u1',
    summary: 'Not placed: Taint (1 NodePool)',
    window: { id: 'w1', at: '2026-03-01T12:00:00.000Z' },
    excluded: [{ nodePool: 'gpu', cause: 'Taint', message: 'taint gpu=true:NoSchedule not tolerated' }],
    windowsRead: 1,
    omittedPods: false,
  };
  const seen: { method: string; url: string; authorization: string; contentType: string; body: string }[] =
    [];
  let server: Server;
  let url: string;

  const body = async (request: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      void body(request).then((text) => {
        seen.push({
          method: request.method ?? '',
          url: request.url ?? '',
          authorization: request.headers.authorization ?? '',
          contentType: request.headers['content-type'] ?? '',
          body: text,
        });
        const send = (status: number, payload: unknown) => {
          response.writeHead(status, { 'Content-Type': 'application/json' });
          response.end(JSON.stringify(payload));
        };
        if (request.headers.authorization !== 'Bearer good') return send(401, { error: 'invalid token' });
        if (request.url === '/api/explain/pod/shop/web-0') return send(200, answer);
        if (request.url === '/api/explain/pod/secret/db-0')
          return send(403, { error: 'no get on pods in secret' });
        if (request.url === '/api/explain/what-if') {
          return send(200, {
            summary: 'Replaces 4 drifted nodes in 2 waves',
            waves: [{ index: 1, size: 2 }],
          });
        }
        send(404, { error: 'nothing recorded' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function run(argv: string[], token = 'good', files: Record<string, string> = {}) {
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { NODECLAIM_EXPLAIN_URL: url, NODECLAIM_EXPLAIN_TOKEN: token },
      readText: async (file) => {
        const text = files[file];
        if (text === undefined) throw new Error(`ENOENT: no such file, open '${file}'`);
        return text;
      },
    };
    const code = await runCli(argv, io);
    return { code, stdout, stderr };
  }

  test('text: the answer rendered, the token sent as a bearer', async () => {
    const result = await run(['explain', 'pod', 'shop/web-0']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('Summary:  Not placed: Taint (1 NodePool)');
    expect(result.stdout).toContain('Excluded:\n  Taint  gpu  taint gpu=true:NoSchedule not tolerated');
    expect(seen.at(-1)).toMatchObject({
      method: 'GET',
      url: '/api/explain/pod/shop/web-0',
      authorization: 'Bearer good',
    });
  });

  test('json: the answer as the app sent it', async () => {
    const result = await run(['explain', 'pod', 'shop/web-0', '-o', 'json']);
    expect(JSON.parse(result.stdout)).toEqual(answer);
  });

  test('what-if: the manifest posted, the answer rendered', async () => {
    const manifest = 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general\n';
    const result = await run(['explain', '--what-if', '-f', 'np.yaml'], 'good', { 'np.yaml': manifest });
    expect(result.code).toBe(0);
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      url: '/api/explain/what-if',
      contentType: 'application/json',
      body: JSON.stringify({
        objects: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'general' } }],
      }),
    });
    expect(result.stdout).toBe(
      'Summary:  Replaces 4 drifted nodes in 2 waves\nwaves:\n  - index: 1\n    size: 2\n',
    );
  });

  test('what-if: a manifest that is not YAML, or not the subject given, is not sent', async () => {
    const before = seen.length;
    const files = { 'np.yaml': 'kind: NodePool\nmetadata:\n  name: spot\n', 'bad.yaml': 'kind: [NodePool\n' };
    const other = await run(['explain', 'nodepool', 'general', '--what-if', '-f', 'np.yaml'], 'good', files);
    expect(other).toMatchObject({ code: 2 });
    expect(other.stderr).toContain(
      'np.yaml: no NodePool general in it: the subject given must be the manifest',
    );
    const bad = await run(['explain', '--what-if', '-f', 'bad.yaml'], 'good', files);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('bad.yaml: not YAML or JSON');
    expect(seen.length).toBe(before);
    expect(
      manifestMismatch('{"kind":"Pod","metadata":{"name":"web-0"}}', {
        kind: 'pod',
        namespace: 'shop',
        name: 'web-0',
      }),
    ).toBeUndefined();
    expect(
      manifestMismatch('kind: Pod\nmetadata:\n  name: web-0\n  namespace: prod\n', {
        kind: 'pod',
        namespace: 'shop',
        name: 'web-0',
      }),
    ).toContain('no Pod shop/web-0');
    expect(manifestMismatch('# nothing\n', undefined)).toBe('no Kubernetes object in it');
  });

  test('failures: exit 1 with what to do, exit 2 for a manifest that cannot be read', async () => {
    expect(await run(['explain', 'pod', 'shop/web-0'], 'stale')).toMatchObject({ code: 1, stdout: '' });
    expect((await run(['explain', 'pod', 'shop/web-0'], 'stale')).stderr).toContain('sign in: az login');
    expect((await run(['explain', 'pod', 'secret/db-0'])).stderr).toContain(
      'get on pods in namespace secret',
    );
    expect((await run(['explain', 'node', 'gone'])).stderr).toContain('Nothing recorded about node gone yet');
    const missing = await run(['explain', '--what-if', '-f', 'nope.yaml']);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('cannot read the manifest nope.yaml');
    expect(await run(['explain', 'pod', 'web-0'])).toMatchObject({ code: 2 });
  });

  test('an app that is not there: the URL named', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    let stderr = '';
    const code = await runCli(
      ['explain', 'node', 'n1', '--url', `http://127.0.0.1:${port}`, '--token', 't'],
      {
        stdout: () => undefined,
        stderr: (text) => (stderr += text),
        env: {},
        readText: async () => '',
      },
    );
    expect(code).toBe(1);
    expect(stderr).toContain(`Could not reach http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  test('an answer this CLI does not know is still shown', () => {
    expect(renderUnknown({ kind: 'later', summary: 's', items: [], nested: { a: null } })).toBe(
      'Summary:  s\nkind: later\nitems: (none)\nnested:\n  a: -\n',
    );
  });
});
