import type { Socket } from "node:net";
import { deserialize, serialize } from "node:v8";

/*
 * The write relay's framing (docs/postgres.md "The write relay"): each frame is a 4-byte big-endian length and a
 * value in V8's serialization format, the structured clone the store thread already relies on (byte arrays stay
 * Buffers, `undefined` stays undefined). The first frame a follower sends is its hello: the secret's bytes as they
 * are, so that the leader deserializes nothing before the secret was checked.
 */

/** A frame larger than this ends the connection: a relayed call carries at most one publish request's messages. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** The most a hello may hold: a secret is 32 characters. */
const MAX_HELLO_BYTES = 256;

const frame = (body: Buffer): Buffer[] => {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return [head, body];
};

export function writeHello(socket: Socket, secret: string): void {
  for (const part of frame(Buffer.from(secret))) socket.write(part);
}

export function writeFrame(socket: Socket, value: unknown): void {
  for (const part of frame(serialize(value))) socket.write(part);
}

/**
 * What both ends send: the items pushed in one event-loop turn (a follower's calls, the leader's answers) leave as
 * one frame, an array, once the turn is over. Nothing is written to a socket already destroyed.
 */
export function framePerTurn<T>(socket: Socket): (item: T) => void {
  let items: T[] = [];
  let scheduled = false;
  return (item) => {
    items.push(item);
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const frame = items;
      items = [];
      if (!socket.destroyed) writeFrame(socket, frame);
    });
  };
}

/**
 * Calls `onFrame` with each value read from the socket, in order. With `hello`, the first frame is a hello (at most
 * MAX_HELLO_BYTES, not deserialized): the socket is destroyed unless `hello` accepts its bytes. A frame over
 * MAX_FRAME_BYTES, or one that does not deserialize, destroys the socket with that error.
 */
export function readFrames(socket: Socket, onFrame: (value: unknown) => void, hello?: (bytes: Buffer) => boolean): void {
  let greeted = hello === undefined;
  let chunks: Buffer[] = [];
  let buffered = 0;
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    buffered += chunk.length;
    if (buffered < 4) return;
    let data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
    let at = 0;
    while (data.length - at >= 4) {
      const length = data.readUInt32BE(at);
      const most = greeted ? MAX_FRAME_BYTES : MAX_HELLO_BYTES;
      if (length > most) {
        socket.destroy(new Error(`relay frame of ${length} bytes is over ${most}`));
        return;
      }
      if (data.length - at - 4 < length) break;
      if (!greeted) {
        greeted = true;
        const bytes = data.subarray(at + 4, at + 4 + length);
        at += 4 + length;
        if (hello?.(bytes) !== true) {
          socket.destroy();
          return;
        }
        continue;
      }
      let value: unknown;
      try {
        value = deserialize(data.subarray(at + 4, at + 4 + length));
      } catch (error) {
        socket.destroy(error as Error);
        return;
      }
      at += 4 + length;
      onFrame(value);
      if (socket.destroyed) return;
    }
    data = data.subarray(at);
    chunks = data.length === 0 ? [] : [data];
    buffered = data.length;
  });
}
