import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client as QstashClient, Receiver as SdkReceiver } from "@upstash/qstash";
import { serve } from "@upstash/workflow";
import { track } from "./leaks.js";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "./server.js";

type RouteFunction = Parameters<typeof serve>[0];
type ServeOptions = NonNullable<Parameters<typeof serve>[1]>;
type Handler = (request: Request) => Promise<Response>;

/**
 * A real workflow app on 127.0.0.1: each path runs the official SDK's own `serve` (framework-free), with its QStash
 * client pointed at a real Ferry and its Receiver verifying every delivery's signature. Plain handlers (a third party
 * for `context.call`) may be mounted beside them.
 */
export class WorkflowApp {
  private readonly routes = new Map<string, Handler>();
  readonly calls: { path: string; status: number }[] = [];

  private constructor(
    private readonly server: Server,
    readonly ferryUrl: string,
    readonly token: string,
  ) {}

  static async start(ferryUrl: string, token: string): Promise<WorkflowApp> {
    const server = createServer((req, res) => {
      void app.handle(req).then(
        async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
          res.end(Buffer.from(await response.arrayBuffer()));
          app.calls.push({ path: req.url ?? "", status: response.status });
        },
        (error: unknown) => {
          res.writeHead(500);
          res.end(String(error));
        },
      );
    });
    const app = new WorkflowApp(server, ferryUrl, token);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    track(`workflow app on ${app.base}`, () => server.listening);
    return app;
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  /** Mounts a workflow at `path` with the SDK's `serve`. */
  workflow(path: string, route: RouteFunction, options: Partial<ServeOptions> = {}): string {
    const { handler } = serve(route, {
      qstashClient: new QstashClient({ baseUrl: this.ferryUrl, token: this.token }),
      receiver: new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY }),
      env: {},
      ...options,
    } as ServeOptions);
    this.routes.set(path, handler as Handler);
    return this.url(path);
  }

  /** Mounts a plain handler (a third party). */
  plain(path: string, handler: Handler): string {
    this.routes.set(path, handler);
    return this.url(path);
  }

  private async handle(req: IncomingMessage): Promise<Response> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? "/").split("?")[0]!;
    const handler = this.routes.get(path);
    if (!handler) return new Response("no such route", { status: 404 });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const method = req.method ?? "GET";
    const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
    return handler(new Request(this.url(req.url ?? "/"), { method, headers, body }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
