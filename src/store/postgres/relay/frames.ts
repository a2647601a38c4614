import type { Socket } from "node:net";
import { deserialize, serialize } from "node:v8";

/*
 * The write relay's framing (docs/postgres.md "The write relay"): each frame is a 4-byte big-endian length and a
 * value in V8's serialization format, the structured clone the store thread already relies on (byte arrays stay
 * Buffers, `undefined` stays undefined). Only nodes of one cluster speak it, after the secret of the first frame.
 */

/** A frame larger than this ends the connection: a relayed call carries at most one publish request's messages. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export function writeFrame(socket: Socket, value: unknown): void {
  const body = serialize(value);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  socket.write(head);
  socket.write(body);
}

/**
 * Calls `onFrame` with each value read from the socket, in order. A frame over MAX_FRAME_BYTES, or one that does not
 * deserialize, destroys the socket with that error.
 */
export function readFrames(socket: Socket, onFrame: (value: unknown) => void): void {
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
      if (length > MAX_FRAME_BYTES) {
        socket.destroy(new Error(`relay frame of ${length} bytes is over ${MAX_FRAME_BYTES}`));
        return;
      }
      if (data.length - at - 4 < length) break;
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
