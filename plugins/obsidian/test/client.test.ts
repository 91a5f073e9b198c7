// Reconnection, re-subscription and time-outs: a daemon cannot be killed and restarted from
// here, so these drive the client against a small NDJSON server in this process. Everything the
// daemon itself answers is tested against the real daemon in daemon.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { DisconnectedError, LineDecoder, RequestTimeout, SidecarClient, type ConnectionState } from "../src/client";

interface Seen {
  method: string;
  id: number;
  params: unknown;
}

function server(path: string, answer: (req: Seen, socket: Socket) => void): Promise<{ srv: Server; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const srv = createServer((socket) => {
    sockets.push(socket);
    const lines = new LineDecoder();
    socket.on("data", (chunk) => {
      for (const line of lines.push(chunk)) answer(JSON.parse(line) as Seen, socket);
    });
    socket.on("error", () => undefined);
  });
  return new Promise((resolve) => srv.listen(path, () => resolve({ srv, sockets })));
}

const reply = (socket: Socket, id: number, result: unknown): void => {
  socket.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n");
};

async function waitFor(what: string, ok: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("reconnecting client", () => {
  const dir = mkdtempSync(join(tmpdir(), "sct-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const fast = { initialMs: 20, maxMs: 200, factor: 2, jitter: 0 };

  it("reconnects after the daemon goes away and subscribes again", async () => {
    const path = join(dir, "a.sock");
    const subscribes: unknown[] = [];
    const states: ConnectionState[] = [];
    const answer = (req: Seen, socket: Socket): void => {
      if (req.method === "events.subscribe") subscribes.push(req.params);
      reply(socket, req.id, req.method === "index.status" ? { notes: 1 } : { subscribed: ["index.changed"] });
    };
    let { srv, sockets } = await server(path, answer);
    const client = new SidecarClient({ socketPath: () => path, backoff: fast });
    client.onState((s) => states.push(s));
    const events: unknown[] = [];
    client.on("index.changed", (p) => events.push(p));
    client.start();
    await client.ready(2_000);
    await waitFor("the first subscription", () => subscribes.length === 1);
    assert.deepEqual(subscribes[0], { events: ["index.changed"] });

    // the daemon pushes a notification
    sockets[0]?.write('{"jsonrpc":"2.0","method":"index.changed","params":{"paths":["a.md"],"deleted":[],"notes":1}}\n');
    await waitFor("the notification", () => events.length === 1);

    // the daemon stops: the client goes down, a call fails fast, then the daemon comes back
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
    await waitFor("down", () => client.state === "down" || client.state === "connecting");
    await assert.rejects(client.call("index.status", {}), DisconnectedError);
    ({ srv, sockets } = await server(path, answer));
    await waitFor("reconnected", () => client.state === "connected", 3_000);
    await waitFor("the second subscription", () => subscribes.length === 2);
    assert.deepEqual(await client.call("index.status", {}), { notes: 1 });
    assert.ok(states.includes("down") && states.filter((s) => s === "connected").length === 2, states.join(","));
    client.stop();
    await new Promise<void>((r) => srv.close(() => r()));
  });

  it("keeps retrying while no socket exists yet, and fails slow requests with a time-out", async () => {
    const path = join(dir, "b.sock");
    let asked = 0;
    const client = new SidecarClient({
      socketPath: () => {
        asked++;
        return path;
      },
      backoff: fast,
      requestTimeoutMs: 100,
    });
    client.start();
    await waitFor("several attempts", () => asked >= 3);
    assert.equal(client.state === "connected", false);
    assert.match(client.lastError, /ENOENT|ECONNREFUSED/);
    const { srv } = await server(path, () => undefined); // accepts, never answers
    await client.ready(3_000);
    await assert.rejects(client.call("index.status", {}), RequestTimeout);
    client.stop();
    await new Promise<void>((r) => srv.close(() => r()));
  });

  it("rejects a request whose connection drops before the answer", async () => {
    const path = join(dir, "c.sock");
    const { srv } = await server(path, (_req, socket) => socket.destroy());
    const client = new SidecarClient({ socketPath: () => path, backoff: fast });
    client.start();
    await client.ready(2_000);
    await assert.rejects(client.call("index.status", {}), DisconnectedError);
    client.stop();
    await new Promise<void>((r) => srv.close(() => r()));
  });
});
