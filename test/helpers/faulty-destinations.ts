import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { track } from "./leaks.js";

/**
 * Destinations that misbehave on purpose, each a real server on 127.0.0.1 (docs/reliability.md, "Destination
 * faults"). Every server counts the requests it saw and the bytes it wrote, and closes all its sockets on `close`.
 */
export interface FaultyDestination {
  url: string;
  /** Requests whose head arrived. */
  requests: number;
  /** Response bytes written so far. */
  bytesWritten: number;
  close(): Promise<void>;
}

type Handler = (socket: Socket, dest: FaultyDestination) => void;

/** A raw TCP server: `onRequest` runs once per request head (the body is ignored). */
export async function rawDestination(onRequest: Handler): Promise<FaultyDestination> {
  const sockets = new Set<Socket>();
  const dest: FaultyDestination = { url: "", requests: 0, bytesWritten: 0, close: async () => {} };
  const server: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let head = "";
    socket.on("data", (d: Buffer) => {
      if (head.includes("\r\n\r\n")) return;
      head += d.toString("latin1");
      if (head.includes("\r\n\r\n")) {
        dest.requests++;
        onRequest(socket, dest);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  dest.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/fault`;
  track(`destination ${dest.url}`, () => server.listening);
  dest.close = () => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return dest;
}

/** Writes `total` bytes of a response body in 64 KiB chunks, respecting back-pressure; stops when the peer leaves. */
export function stream(socket: Socket, dest: FaultyDestination, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const pump = () => {
    while (!socket.destroyed && dest.bytesWritten < total) {
      dest.bytesWritten += chunk.length;
      if (!socket.write(chunk)) return void socket.once("drain", pump);
    }
    if (!socket.destroyed && Number.isFinite(total)) socket.end();
  };
  pump();
}

/** Writes an endless chunked body (HTTP/1.1 chunks of 64 KiB) until the peer leaves. */
export function endlessChunks(socket: Socket, dest: FaultyDestination): void {
  const data = Buffer.alloc(64 * 1024, 0x62);
  const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
  const pump = () => {
    while (!socket.destroyed) {
      dest.bytesWritten += data.length;
      if (!socket.write(chunk)) return void socket.once("drain", pump);
    }
  };
  pump();
}

/**
 * An HTTPS server with a self-signed certificate for 127.0.0.1, answering 200 (it is never reached). The certificate is
 * a checked-in fixture (test/fixtures/tls/, made once with `openssl req -x509 -newkey rsa:2048 -nodes -subj
 * /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 36500`), so the suite needs no openssl on the machine.
 */
export async function selfSignedDestination(): Promise<FaultyDestination> {
  const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "tls");
  const dest: FaultyDestination = { url: "", requests: 0, bytesWritten: 0, close: async () => {} };
  const tls = { key: readFileSync(join(dir, "self-signed.key")), cert: readFileSync(join(dir, "self-signed.crt")) };
  const server = createHttpsServer(tls, (_, res) => {
    dest.requests++;
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  dest.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/fault`;
  track(`destination ${dest.url}`, () => server.listening);
  dest.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return dest;
}

/** An HTTP server that reads each request and never answers (a hanging destination). */
export async function hangingDestination(): Promise<FaultyDestination & { server: HttpServer }> {
  const dest = { url: "", requests: 0, bytesWritten: 0, close: async () => {} } as FaultyDestination & {
    server: HttpServer;
  };
  dest.server = createHttpServer((req) => {
    dest.requests++;
    req.resume();
  });
  dest.server.keepAliveTimeout = 0;
  dest.server.requestTimeout = 0;
  await new Promise<void>((resolve) => dest.server.listen(0, "127.0.0.1", resolve));
  dest.url = `http://127.0.0.1:${(dest.server.address() as AddressInfo).port}/hang`;
  track(`destination ${dest.url}`, () => dest.server.listening);
  dest.close = () => {
    dest.server.closeAllConnections();
    return new Promise((resolve) => dest.server.close(() => resolve()));
  };
  return dest;
}
