import Fastify from "fastify";

/** A message as the publish endpoint received it. */
export interface Published {
  url: string;
  body: Buffer;
  contentType: string | undefined;
  ip: string;
}

/**
 * The HTTP side shared by every app that stands in for Ferry in the bench (the ceilings and the peers), so that they
 * differ only in what they do with a message: Fastify, as in Ferry; `POST /v2/publish/<url>` with the body as a
 * Buffer, answered with what `accept` returns; `GET /health`. Listens on BENCH_PORT on 127.0.0.1. On SIGTERM it stops
 * taking requests, runs `close`, and exits.
 */
export async function servePublishEndpoint(
  accept: (message: Published) => Promise<object>,
  close: () => Promise<unknown> = async () => {},
): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 100 * 1024 * 1024 });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  app.get("/health", async () => ({ status: "ok" }));
  app.post("/v2/publish/*", (req) =>
    accept({
      url: (req.raw.url ?? "").slice("/v2/publish/".length),
      body: req.body as Buffer,
      contentType: req.headers["content-type"],
      ip: req.ip,
    }),
  );
  await app.listen({ port: Number(process.env.BENCH_PORT), host: "127.0.0.1" });
  process.once("SIGTERM", () => void app.close().then(close).then(() => process.exit(0)));
}
