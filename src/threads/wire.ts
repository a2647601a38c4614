import { AppError, type ErrorCode } from "../errors.js";

/**
 * What crosses between Ferry's threads whatever the thread (docs/threading.md): errors as plain data, and byte arrays
 * moved (transferred) so a message body is copied at most once on its way. Each thread's own messages are typed
 * beside it (src/store/thread/wire.ts, src/delivery/egress-thread/wire.ts); the entry of every worker is
 * worker-entry.ts, here.
 */

/** An error as plain data: its class name, message, stack and every own enumerable primitive (`code`, `unavailable` …). */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  props: Record<string, unknown>;
}

export function errorToWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), props: {} };
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    // Primitives and plain string maps (AppError's headers) cross; objects such as pg's `client` stay behind.
    if (value === null || typeof value !== "object" || key === "headers") props[key] = value;
  }
  // AppError keeps `code` as an own property already; a getter-defined one would be missed by Object.entries.
  const code = (error as { code?: unknown }).code;
  if (code !== undefined && !("code" in props)) props.code = code;
  const out: WireError = { name: error.name, message: error.message, props };
  if (error.stack !== undefined) out.stack = error.stack;
  return out;
}

/** Rebuilds an error thrown in the other thread: an AppError stays an AppError (same code, status and headers). */
export function errorFromWire(wire: WireError): Error {
  let error: Error;
  if (wire.name === "AppError" && typeof wire.props.code === "string") {
    const headers = (wire.props.headers ?? {}) as Record<string, string>;
    error = new AppError(wire.props.code as ErrorCode, wire.message, headers);
  } else {
    error = new Error(wire.message);
    error.name = wire.name;
    for (const [key, value] of Object.entries(wire.props)) {
      if (key !== "name" && key !== "message" && key !== "stack") (error as unknown as Record<string, unknown>)[key] = value;
    }
  }
  // The other thread's stack says where it really failed.
  if (wire.stack !== undefined) error.stack = `${wire.stack}\n    --- across a worker thread ---`;
  return error;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Prepares a value for postMessage: every byte array (Buffer, Uint8Array) becomes one that owns its whole
 * ArrayBuffer, listed in `transfer` so it is moved, not cloned. A Buffer is often a view into a larger pooled or
 * socket buffer, which structured clone would copy whole. `ownsBytes` says whether this side may give away an array
 * that already owns its memory (the store thread may: what it answers it no longer uses; the main thread may not:
 * the caller keeps its buffers). Objects are copied only along paths that hold a byte array; the input is not
 * changed.
 */
export function forTransfer(value: unknown, transfer: ArrayBuffer[], ownsBytes: boolean, seen = new Map<Uint8Array, Uint8Array>()): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Uint8Array) {
    const done = seen.get(value);
    if (done) return done;
    const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
    if (ownsBytes && whole && value.buffer instanceof ArrayBuffer) {
      // Several views of one buffer (one body shared by a fan-out's messages): list the buffer once.
      if (!transfer.includes(value.buffer)) transfer.push(value.buffer);
      seen.set(value, value);
      return value;
    }
    const movable = Uint8Array.prototype.slice.call(value);
    seen.set(value, movable);
    transfer.push(movable.buffer as ArrayBuffer);
    return movable;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = forTransfer(item, transfer, ownsBytes, seen);
      if (next !== item) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = value[key];
    const next = forTransfer(item, transfer, ownsBytes, seen);
    if (next !== item) {
      out ??= { ...value };
      out[key] = next;
    }
  }
  return out ?? value;
}

/** Turns the byte arrays of a received value back into Buffers (structured clone delivers plain Uint8Arrays). */
export function reviveBuffers(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Uint8Array) {
    return value.constructor === Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveBuffers(value[i]);
    return value;
  }
  if (!isPlainObject(value)) return value;
  for (const key in value) value[key] = reviveBuffers(value[key]);
  return value;
}
