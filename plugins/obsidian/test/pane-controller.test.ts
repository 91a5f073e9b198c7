// The pane controller's scheduling with a fake clock and a counting RPC: what is fetched when.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RpcError } from "../src/client";
import { buildTaxonomy } from "../src/model/relations";
import { PaneController, Staleness, type PaneView, type Rpc } from "../src/pane-controller";

class FakeTimers {
  t = 0;
  private seq = 0;
  readonly due = new Map<number, { at: number; fn: () => void }>();
  set = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.due.set(id, { at: this.t + ms, fn });
    return id;
  };
  clear = (h: unknown): void => {
    this.due.delete(h as number);
  };
  now = (): number => this.t;
  async advance(ms: number): Promise<void> {
    this.t += ms;
    for (const [id, d] of [...this.due]) {
      if (d.at <= this.t) {
        this.due.delete(id);
        d.fn();
      }
    }
    for (let i = 0; i < 20; i++) await Promise.resolve();
  }
}

function fakeRpc(): { rpc: Rpc; calls: string[] } {
  const calls: string[] = [];
  const rpc: Rpc = {
    call: async (method, params) => {
      calls.push(method);
      if (method === "graph.current") throw new RpcError(-32601, "no such method");
      if (method === "note.links") return { path: (params as { note: string }).note, outgoing: [], incoming: [] };
      if (method === "note.mentions") return { path: "", names: [], mentions: [] };
      if (method === "note.backlinks") return { path: (params as { note: string }).note, backlinks: [], sources: [] };
      if (method === "search") return { query: "", mode: "semantic", results: [] };
      if (method === "lint.run") return { findings: [] };
      throw new Error(`unexpected ${method}`);
    },
  };
  return { rpc, calls };
}

const options = {
  debounceMs: 100,
  mentionsEveryMs: 5_000,
  relatedEveryMs: 30_000,
  lintEveryMs: 15_000,
  relatedLimit: 3,
  showRelated: true,
  showUnlinked: true,
};

describe("pane controller scheduling", () => {
  it("fetches everything for a new note, then only what a change can affect, throttled", async () => {
    const timers = new FakeTimers();
    const { rpc, calls } = fakeRpc();
    const views: PaneView[] = [];
    const pane = new PaneController(rpc, async () => ({ aliases: [], body: "text" }), (v) => views.push(v), () => buildTaxonomy(), options, timers);
    await pane.setActive("a.md");
    assert.deepEqual(calls.sort(), ["graph.current", "lint.run", "note.backlinks", "note.links", "note.mentions", "search"]);
    assert.equal(views.length, 1);

    // the active note is saved: links + related would be due, but related is throttled (30 s)
    calls.length = 0;
    pane.onIndexChanged({ paths: ["a.md"], deleted: [], notes: 2 });
    await timers.advance(50);
    assert.equal(calls.length, 0, "debounced");
    await timers.advance(60);
    assert.deepEqual(calls.sort(), ["note.backlinks", "note.links"], "graph.current is known missing; nothing else due");
    assert.equal(views.length, 1, "an unchanged model is not redrawn");

    // the save made the whole-vault lint stale: one trailing refresh when its interval is over
    calls.length = 0;
    await timers.advance(15_000);
    assert.deepEqual(calls.sort(), ["lint.run", "note.backlinks", "note.links"]);

    // another note changes: its mentions of this note may have changed; lint waits its turn
    calls.length = 0;
    pane.onIndexChanged({ paths: ["b.md"], deleted: [], notes: 2 });
    await timers.advance(100);
    assert.deepEqual(calls.sort(), ["note.backlinks", "note.links", "note.mentions"]);

    // the throttled "related" still gets its trailing refresh
    calls.length = 0;
    await timers.advance(30_000);
    assert.ok(calls.includes("search"), calls.join(","));
    pane.dispose();
  });

  it("shows an empty pane when the active note is deleted", async () => {
    const timers = new FakeTimers();
    const { rpc } = fakeRpc();
    const views: PaneView[] = [];
    const pane = new PaneController(rpc, async () => null, (v) => views.push(v), () => buildTaxonomy(), options, timers);
    await pane.setActive("a.md");
    pane.onIndexChanged({ paths: [], deleted: ["a.md"], notes: 1 });
    assert.deepEqual(views[views.length - 1], { kind: "empty", message: "a.md was removed from the index." });
  });

  it("throttles a stale part", () => {
    const s = new Staleness(1000);
    assert.equal(s.wait(0), 0);
    s.fetched(0);
    assert.equal(s.wait(10), null);
    s.invalidate();
    assert.equal(s.wait(400), 600);
    s.reset();
    assert.equal(s.wait(400), 0);
  });
});
