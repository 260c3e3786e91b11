// An outage of the Kubernetes API server for one Function App only. The control plane is shared by every
// test file running at once, so it must never be stopped; instead the app reaches it through this TCP
// relay, which can close every connection and refuse new ones for a while (connection refused, as from a
// stopped API server), then listen again on the same port. The API server, the kubelet simulator and the
// test's own admin client keep running throughout.
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SERVER_LINE = /server: https:\/\/(127\.0\.0\.1):(\d+)/;

export class ApiServerRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** The relay's port: chosen at the first `up`, kept by every later one so a kubeconfig stays valid. */
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** The relay to the API server a kubeconfig names. */
  static async toServerOf(kubeconfigPath: string): Promise<ApiServerRelay> {
    const match = SERVER_LINE.exec(await readFile(kubeconfigPath, 'utf8'));
    if (!match) throw new Error(`no API server address in ${kubeconfigPath}`);
    return new ApiServerRelay(match[1] as string, Number(match[2]));
  }

  get isUp(): boolean {
    return this.server !== undefined;
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Every open connection cut, and nothing listening: the app's requests are refused. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** A copy of `kubeconfigPath` (same user, same CA) whose server is this relay; its path. */
  async kubeconfigThrough(kubeconfigPath: string): Promise<string> {
    if (this.port === 0) throw new Error('bring the relay up first: its port is chosen then');
    const original = await readFile(kubeconfigPath, 'utf8');
    const rewritten = original.replace(SERVER_LINE, `server: https://127.0.0.1:${this.port}`);
    if (rewritten === original) throw new Error(`no API server address in ${kubeconfigPath}`);
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'api-relay-')), 'relayed.kubeconfig');
    await writeFile(file, rewritten);
    return file;
  }
}
