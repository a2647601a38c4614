import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { PassThrough, type Readable } from "node:stream";
import { timerDelay } from "../domain/timers.js";
import { AppError } from "../errors.js";

/**
 * How a refused body ends (docs/reliability.md, "Ingress limits"). Closing the connection while the client still
 * sends makes the kernel answer its next bytes with a reset, and the client often sees EPIPE or ECONNRESET instead of
 * the 413 (7 of 20 posts one byte over the limit did). So the 413 is answered at once, and the rest of the body is
 * read and thrown away, up to the refused limit plus DISCARD_SLACK_BYTES in all: a client that sends about what the
 * limit allows then reads its 413 on a connection that stays usable. Past that bound reading stops, and once the 413
 * is written the connection is half-closed and, LINGER_MS later, closed (a lingering close, RFC 9112 §9.6): a client
 * that reads while it sends sees the 413 before the reset. An oversized body costs at most what an accepted one of
 * the largest size would (nothing is kept in memory).
 */
export const DISCARD_SLACK_BYTES = 1024 * 1024;
/** How long a connection past the discard bound stays half-closed before it is closed. */
export const LINGER_MS = 2000;

const discarding = Symbol("ferry.discarding");

/**
 * Reads the rest of `raw`'s body and throws it away; once more than `bound` bytes of the body were received in all
 * (`received` of them already), reading stops and the connection ends after `response` (the 413) was written.
 */
export function discardRest(raw: IncomingMessage, response: ServerResponse, received: number, bound: number): void {
  const flagged = raw as IncomingMessage & { [discarding]?: true };
  if (flagged[discarding] || raw.complete) return;
  flagged[discarding] = true;
  const socket = raw.socket as Socket & { destroySoon(): void };
  // Node closes a connection whose answer says `Connection: close` (the client asked for it, or the body was not
  // worth reading) as soon as the answer is written, through destroySoon: that close must wait for the body.
  let closeWanted = false;
  socket.destroySoon = () => {
    closeWanted = true;
    socket.end(); // the answer is complete: half-close, and go on reading
    if (raw.complete) socket.destroy();
  };
  let total = received;
  const onData = (chunk: Buffer) => {
    total += chunk.length;
    if (total <= bound) return;
    raw.off("data", onData);
    raw.pause();
    lingeringClose(socket, response);
  };
  raw.on("data", onData);
  raw.once("end", () => {
    if (closeWanted) socket.destroy(); // everything was read: this close resets nothing
  });
  raw.on("error", () => {}); // a client that goes away mid-body is no error of the server's
  raw.resume();
}

/** Past the bound: once the answer is written, half-close, and close LINGER_MS later. */
function lingeringClose(socket: Socket, response: ServerResponse): void {
  const close = () => {
    socket.end();
    setTimeout(() => socket.destroy(), timerDelay(LINGER_MS)).unref();
  };
  if (response.writableFinished) close();
  else {
    response.once("finish", close);
    response.once("close", close);
  }
}

/** The 413 of a message body above the plan's max_message_size; `statusCode` tells Fastify's body reader. */
export function messageTooLarge(what: string, max: number, headers: Record<string, string> = {}): AppError {
  const error = new AppError("payload_too_large", `invalid body: ${what} is above the plan's max_message_size (${max})`, headers);
  return Object.assign(error, { statusCode: error.status });
}

/**
 * A body without a length (chunked), counted as it arrives: the body Fastify reads, which fails with a 413 as soon as
 * more than `max` bytes came, without buffering the rest (the rest is discarded, see above). Before this, chunked
 * uploads were read whole up to the server's 100 MB body limit and only then checked: 8 uploads of 95 MB took the
 * process from 303 to 792 MB of RSS.
 */
export function countedBody(raw: IncomingMessage, response: ServerResponse, payload: Readable, max: number): Readable {
  const out = new PassThrough({ highWaterMark: 64 * 1024 });
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > max) {
      payload.off("data", onData);
      out.destroy(messageTooLarge(`a chunked body of more than ${max} bytes`, max));
      discardRest(raw, response, received, max + DISCARD_SLACK_BYTES);
      return;
    }
    if (!out.write(chunk)) payload.pause();
  };
  out.on("drain", () => payload.resume());
  payload.on("data", onData);
  payload.once("end", () => {
    if (received <= max) out.end();
  });
  payload.once("error", (error) => out.destroy(error));
  return out;
}
