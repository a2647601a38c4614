import type { ServerConfig } from "./types.js";

/** An answer of Ferry's API that was not 2xx: the message is the API's own `{"error": ...}` text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type QueryValue = string | number | boolean | undefined | null | string[];

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  body?: string | object;
  signal?: AbortSignal;
}

/** Builds `?a=1&b=x` from the defined, non-empty values; arrays repeat the key. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, v);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

async function call<T>(authorization: string, method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { authorization, ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    if (typeof opts.body !== "string") headers["content-type"] = "application/json";
  }
  const init: RequestInit = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) init.body = body;
  if (opts.signal) init.signal = opts.signal;
  let res: Response;
  try {
    res = await fetch(path + queryString(opts.query), init);
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "Ferry cannot be reached: check that the server is running.");
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const message =
      json && typeof json === "object" && "error" in json ? String((json as { error: unknown }).error) : text;
    throw new ApiError(res.status, message || `${res.status} ${res.statusText}`);
  }
  return json as T;
}

/** The messaging API with one account's token (Bearer). */
export class MessagingApi {
  constructor(
    readonly token: string,
    readonly config: ServerConfig,
  ) {}

  request<T>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    return call<T>(`Bearer ${this.token}`, method, path, opts);
  }
  get<T>(path: string, opts?: RequestOptions): Promise<T> {
    return this.request<T>("GET", path, opts);
  }
  post<T>(path: string, opts?: RequestOptions): Promise<T> {
    return this.request<T>("POST", path, opts);
  }
  del<T>(path: string, opts?: RequestOptions): Promise<T> {
    return this.request<T>("DELETE", path, opts);
  }
  /** `Svc-<Name>` in this server's dialect (from /console/config.json, never hard-coded). */
  header(name: string): string {
    return this.config.headerPrefix + name;
  }
}

/** The management API with a customer's e-mail and API key (HTTP Basic). */
export class ManagementApi {
  constructor(
    private readonly email: string,
    private readonly apiKey: string,
    readonly config: ServerConfig,
  ) {}

  private get auth(): string {
    const bytes = new TextEncoder().encode(`${this.email}:${this.apiKey}`);
    let binary = "";
    for (const b of bytes) binary += String.fromCharCode(b);
    return `Basic ${btoa(binary)}`;
  }
  /** `/v2/msgsvc/...` or `/v2/qstash/...`, as this server speaks. */
  path(rest: string): string {
    return `/v2/${this.config.managementSegment}/${rest}`;
  }
  get<T>(rest: string, opts?: RequestOptions): Promise<T> {
    return call<T>(this.auth, "GET", this.path(rest), opts);
  }
  post<T>(rest: string, opts?: RequestOptions): Promise<T> {
    return call<T>(this.auth, "POST", this.path(rest), opts);
  }
}

export async function loadServerConfig(): Promise<ServerConfig> {
  const res = await fetch("/console/config.json", { cache: "no-store" });
  if (!res.ok) throw new ApiError(res.status, "The console cannot read /console/config.json");
  return (await res.json()) as ServerConfig;
}

export const enc = encodeURIComponent;
