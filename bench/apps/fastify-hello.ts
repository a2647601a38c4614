import Fastify from "fastify";

/** Ceiling 1: Fastify's hello world, nothing else (no logger, default options). Port from BENCH_PORT. */
const app = Fastify({ logger: false });
app.get("/", async () => ({ hello: "world" }));
await app.listen({ port: Number(process.env.BENCH_PORT), host: "127.0.0.1" });
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
