/**
 * The daemon's socket client: NDJSON framing, request ids, a pending map, notifications and
 * reconnection with backoff. No `obsidian` import, so it runs (and is tested) in plain node
 * against the real daemon; Node's `net` is loaded only when the first connection is made, so
 * the module can be imported where Node is absent.
 */
import type { KnownMethods } from "./methods";
import { EVENT_NAMES, type EventName } from "./events";
import { isRecord } from "./guards";
import { loadNet } from "./node-modules";

export type ConnectionState = "connecting" | "connected" | "down" | "stopped";

/** An error the daemon answered with: a JSON-RPC code, a message and optional data. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** The connection went away (or was never there) before the answer came. */
export class DisconnectedError extends Error {
  constructor(message = "not connected to the sidecar daemon") {
    super(message);
    this.name = "DisconnectedError";
  }
}

export class RequestTimeout extends Error {
  constructor(method: string, ms: number) {
    super(`${method}: no answer from the sidecar daemon within ${ms} ms`);
    this.name = "RequestTimeout";
  }
}

/** JSON-RPC codes the daemon documents (sidecar/errors.py). */
export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  noteNotFound: -32002,
} as const;

// ------------------------------------------------------------------------------- framing

/** Splits a byte or text stream into lines; multi-byte characters may straddle chunks. */
export class LineDecoder {
  private buffer = "";
  private readonly utf8 = new TextDecoder("utf-8");

  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === "string" ? chunk : this.utf8.decode(chunk, { stream: true });
    const parts = this.buffer.split("\n");
    this.buffer = parts.pop() ?? "";
    return parts.filter((line) => line.trim() !== "");
  }
}

export type Incoming =
  | { kind: "response"; id: number | string | null; result?: unknown; error?: RpcError }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "invalid"; reason: string };

/** Classifies one line from the daemon; never throws. */
export function parseMessage(line: string): Incoming {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    return { kind: "invalid", reason: `not JSON: ${String(e)}` };
  }
  if (!isRecord(msg) || msg["jsonrpc"] !== "2.0") {
    return { kind: "invalid", reason: "not a JSON-RPC 2.0 object" };
  }
  if (typeof msg["method"] === "string" && !("id" in msg)) {
    return { kind: "notification", method: msg["method"], params: msg["params"] ?? {} };
  }
  const id = msg["id"];
  if (!(id === null || typeof id === "number" || typeof id === "string")) {
    return { kind: "invalid", reason: "response without a usable id" };
  }
  const error = msg["error"];
  if (isRecord(error)) {
    const code = typeof error["code"] === "number" ? error["code"] : ErrorCode.internal;
    const message = typeof error["message"] === "string" ? error["message"] : "error";
    return { kind: "response", id, error: new RpcError(code, message, error["data"]) };
  }
  return { kind: "response", id, result: msg["result"] };
}

export function encodeRequest(id: number, method: string, params: object): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n";
}

// ------------------------------------------------------------------------------- backoff

export interface Backoff {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** 0..1: the share of each delay that is randomised, so many clients do not retry in step. */
  jitter: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 };

/** The wait before reconnect attempt `attempt` (0-based). */
export function backoffDelay(attempt: number, b: Backoff, random: () => number = Math.random): number {
  const base = Math.min(b.maxMs, b.initialMs * Math.pow(b.factor, Math.max(0, attempt)));
  return Math.round(base * (1 - b.jitter + b.jitter * random()));
}

// ------------------------------------------------------------------------------- the client

/** The part of `net.Socket` the client uses, so tests and other runtimes can supply one. */
export interface SocketLike {
  write(data: string): boolean;
  destroy(): void;
  on(event: "data", listener: (chunk: Uint8Array | string) => void): this;
  on(event: "close", listener: () => void): this;
  on(event: "error", listener: (err: Error) => void): this;
}

export type Connector = (path: string) => Promise<SocketLike>;

/** Connects with Node's `net`, imported on first use. */
export const nodeConnector: Connector = async (path) => {
  const net = loadNet();
  return new Promise<SocketLike>((resolve, reject) => {
    const socket = net.createConnection({ path });
    const fail = (err: Error): void => reject(err);
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.off("error", fail);
      resolve(socket);
    });
  });
};

export interface ClientOptions {
  /** Where the daemon listens; asked again before every connection attempt. */
  socketPath: () => string | null | Promise<string | null>;
  connect?: Connector;
  requestTimeoutMs?: number;
  backoff?: Backoff;
  /** Set false for a one-shot client that gives up when the connection drops. */
  reconnect?: boolean;
  log?: (message: string) => void;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

type Handler = (params: unknown) => void;

export class SidecarClient {
  private socket: SocketLike | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly stateListeners = new Set<(s: ConnectionState, detail: string) => void>();
  private readonly waiters = new Set<() => void>();
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private current: ConnectionState = "down";
  private detail = "";
  private running = false;
  private readonly connectImpl: Connector;
  private readonly timeoutMs: number;
  private readonly backoff: Backoff;

  constructor(private readonly options: ClientOptions) {
    this.connectImpl = options.connect ?? nodeConnector;
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** Why the client is down (the last connection error), for the status bar's tooltip. */
  get lastError(): string {
    return this.detail;
  }

  /** Start connecting; reconnects by itself until `stop()`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connectOnce();
  }

  /** Close the connection and fail every pending request; no more reconnecting. */
  stop(): void {
    this.running = false;
    this.clearRetry();
    const socket = this.socket;
    this.socket = null;
    socket?.destroy();
    this.failPending(new DisconnectedError("the sidecar client was stopped"));
    this.setState("stopped", "");
  }

  /** Drop the connection (if any) and connect again now, e.g. after the socket path changed. */
  reconnectNow(): void {
    this.attempt = 0;
    this.clearRetry();
    const socket = this.socket;
    this.socket = null;
    socket?.destroy();
    if (!this.running) {
      this.start();
    } else {
      void this.connectOnce();
    }
  }

  /** Resolves once connected (rejects after `timeoutMs`). */
  ready(timeoutMs = this.timeoutMs): Promise<void> {
    if (this.current === "connected") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        reject(new DisconnectedError(`could not connect within ${timeoutMs} ms: ${this.detail}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.add(done);
    });
  }

  onState(listener: (state: ConnectionState, detail: string) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** A typed call: the method name and params are checked against the daemon's registry. */
  call<M extends keyof KnownMethods>(method: M, params: KnownMethods[M]["params"]): Promise<unknown> {
    return this.request(method, params);
  }

  /** An untyped call, for the built-in `events.*` methods and for testing the daemon's errors. */
  request(method: string, params: object = {}): Promise<unknown> {
    const socket = this.socket;
    if (socket === null || this.current !== "connected") {
      return Promise.reject(new DisconnectedError(this.detail || undefined));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RequestTimeout(method, this.timeoutMs));
      }, this.timeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      socket.write(encodeRequest(id, method, params));
    });
  }

  /**
   * Listen for a daemon notification. The subscription is sent now if connected and again
   * after every reconnect, so callers never re-subscribe themselves.
   */
  on(event: EventName, handler: Handler): () => void {
    let set = this.handlers.get(event);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler);
    if (this.current === "connected" && set.size === 1) {
      void this.subscribe([event]);
    }
    return () => {
      set?.delete(handler);
    };
  }

  // ----------------------------------------------------------------------------- internals

  private async connectOnce(): Promise<void> {
    if (!this.running || this.current === "connecting") return;
    this.setState("connecting", this.detail); // keep the last failure visible while retrying
    let socket: SocketLike;
    try {
      const path = await this.options.socketPath();
      if (path === null) throw new Error("no daemon socket found for this vault");
      socket = await this.connectImpl(path);
    } catch (e) {
      this.connectionLost(errorText(e));
      return;
    }
    if (!this.running) {
      socket.destroy();
      return;
    }
    this.socket = socket;
    const lines = new LineDecoder();
    socket.on("data", (chunk) => {
      for (const line of lines.push(chunk)) this.receive(line);
    });
    socket.on("error", (err) => {
      this.detail = err.message;
    });
    socket.on("close", () => {
      if (this.socket === socket) {
        this.socket = null;
        this.connectionLost(this.detail || "the daemon closed the connection");
      }
    });
    this.attempt = 0;
    this.setState("connected", "");
    const events = [...this.handlers.entries()].filter(([, s]) => s.size > 0).map(([e]) => e);
    if (events.length > 0) await this.subscribe(events as EventName[]);
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }

  private async subscribe(events: EventName[]): Promise<void> {
    const known = events.filter((e) => EVENT_NAMES.includes(e));
    try {
      await this.request("events.subscribe", { events: known });
    } catch (e) {
      this.options.log?.(`events.subscribe failed: ${errorText(e)}`);
    }
  }

  private receive(line: string): void {
    const msg = parseMessage(line);
    if (msg.kind === "notification") {
      for (const handler of this.handlers.get(msg.method) ?? []) {
        try {
          handler(msg.params);
        } catch (e) {
          this.options.log?.(`handler for ${msg.method} failed: ${errorText(e)}`);
        }
      }
      return;
    }
    if (msg.kind === "invalid") {
      this.options.log?.(`ignored a line from the daemon: ${msg.reason}`);
      return;
    }
    const pending = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
    if (pending === undefined) {
      this.options.log?.(`unmatched reply (id ${String(msg.id)}): ${msg.error?.message ?? "ok"}`);
      return;
    }
    this.pending.delete(msg.id as number);
    clearTimeout(pending.timer);
    if (msg.error !== undefined) pending.reject(msg.error);
    else pending.resolve(msg.result);
  }

  private connectionLost(reason: string): void {
    this.failPending(new DisconnectedError(`connection to the sidecar daemon lost: ${reason}`));
    if (!this.running) return;
    this.setState("down", reason);
    if (this.options.reconnect === false) {
      this.running = false;
      return;
    }
    const delay = backoffDelay(this.attempt++, this.backoff);
    this.clearRetry();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connectOnce();
    }, delay);
  }

  private failPending(err: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }

  private clearRetry(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private setState(state: ConnectionState, detail: string): void {
    const changed = state !== this.current || detail !== this.detail;
    this.current = state;
    this.detail = detail;
    if (!changed) return;
    for (const listener of this.stateListeners) listener(state, detail);
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
