// The client, discovery and the pane's controller against the REAL daemon. tests/test_plugins.py
// starts `sidecar serve` on a copy of docs/example-vault and runs this with SIDECAR_SOCKET (the
// socket), SIDECAR_VAULT (the vault copy, which this test writes notes into) and SIDECAR_BIN
// (the `sidecar` executable), in the daemon's environment. Without SIDECAR_SOCKET it is skipped.
import assert from "node:assert/strict";
import { writeFileSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { after, before, describe, it } from "node:test";
import { DisconnectedError, ErrorCode, LineDecoder, RpcError, SidecarClient, parseMessage } from "../src/client";
import { EVENT_NAMES, asIndexChanged, type IndexChanged } from "../src/events";
import { isRecord } from "../src/guards";
import type { PaneModel } from "../src/model/pane";
import { buildTaxonomy } from "../src/model/relations";
import { resolveSocket, whereViaCli } from "../src/node-host";
import { PaneController, fetchReminders, type PaneView } from "../src/pane-controller";
import { asBacklinks, asIndexStatus, asSearch, asTraverse } from "../src/results";

const SOCKET = process.env["SIDECAR_SOCKET"] ?? "";
const VAULT = process.env["SIDECAR_VAULT"] ?? "";
const BIN = process.env["SIDECAR_BIN"] ?? "";
const skip = SOCKET === "" ? "SIDECAR_SOCKET is not set: run through tests/test_plugins.py" : false;

const AUTH = "services/Auth Service.md";
const ADR5 = "decisions/ADR-5 Sessions in Postgres.md";
const ADR6 = "decisions/ADR-6 Sessions in Memcached.md";
const ADR7 = "decisions/ADR-7 Session storage.md";

async function waitFor<T>(what: string, probe: () => T | null | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function expectRpcError(promise: Promise<unknown>, code: number, pattern?: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof RpcError, `expected an RpcError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (pattern !== undefined) assert.match(e.message, pattern);
    return true;
  });
}

/** One line to the socket, bypassing the client, and the daemon's decoded answer. */
async function raw(line: string): Promise<ReturnType<typeof parseMessage>> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: SOCKET });
    const lines = new LineDecoder();
    const timer = setTimeout(() => reject(new Error("no answer to a raw line")), 10_000);
    socket.on("connect", () => socket.write(line + "\n"));
    socket.on("data", (chunk) => {
      const got = lines.push(chunk);
      if (got.length === 0) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseMessage(got[0] ?? ""));
    });
    socket.on("error", reject);
  });
}

describe("the client against the real daemon", { skip }, () => {
  const client = new SidecarClient({ socketPath: () => SOCKET, requestTimeoutMs: 30_000 });
  const changes: IndexChanged[] = [];

  before(async () => {
    client.on("index.changed", (p) => {
      const change = asIndexChanged(p);
      if (change !== null) changes.push(change);
    });
    client.start();
    await client.ready(10_000);
  });

  after(() => client.stop());

  it("finds the daemon's socket as the daemon computes it, and through `sidecar where`", async () => {
    assert.equal(await resolveSocket({ socketPath: "", sidecarPath: "" }, VAULT), SOCKET);
    if (BIN !== "") assert.equal(await whereViaCli(BIN, VAULT), SOCKET);
  });

  it("reads index.status", async () => {
    const status = asIndexStatus(await client.call("index.status", {}));
    assert.ok(status.notes >= 10, `notes: ${status.notes}`);
    assert.equal(status.ready, true);
  });

  it("lists backlinks with line and paragraph context", async () => {
    const result = asBacklinks(await client.call("note.backlinks", { note: "auth" }));
    assert.equal(result.path, AUTH);
    const sources = new Set(result.backlinks.map((b) => b.source));
    for (const s of ["Welcome.md", "people/Alice.md", "services/User Directory.md"]) assert.ok(sources.has(s), s);
    const welcome = result.backlinks.find((b) => b.source === "Welcome.md" && b.relation === "link");
    assert.ok(welcome !== undefined && welcome.line > 0 && welcome.context.includes("[[Auth Service]]"));
  });

  it("searches in lexical mode", async () => {
    const result = asSearch(await client.call("search", { query: "memcached restart", mode: "lexical", limit: 5 }));
    assert.equal(result.mode, "lexical");
    assert.ok(result.results.length > 0);
    assert.ok(result.results.some((h) => h.path === ADR6 || h.path === ADR7), JSON.stringify(result.results));
    for (const hit of result.results) assert.ok(hit.startLine >= 1 && hit.path.endsWith(".md"));
    const old = result.results.find((h) => h.path === ADR6);
    assert.ok(old === undefined || (old.supersededBy.includes(ADR7) && old.current === ADR7), JSON.stringify(old));
  });

  it("answers malformed calls with the documented errors and stays usable", async () => {
    await expectRpcError(client.request("no.such.method", {}), ErrorCode.methodNotFound);
    await expectRpcError(client.request("note.backlinks", {}), ErrorCode.invalidParams, /note/);
    await expectRpcError(client.request("note.backlinks", { note: "auth", bogus: 1 }), ErrorCode.invalidParams, /bogus/);
    await expectRpcError(client.call("search", { query: "" }), ErrorCode.invalidParams);
    await expectRpcError(client.call("note.backlinks", { note: "No Such Note Anywhere" }), ErrorCode.noteNotFound);
    await expectRpcError(client.request("events.subscribe", { events: ["no.such.event"] }), ErrorCode.invalidParams);

    const garbage = await raw("{this is not json");
    assert.ok(garbage.kind === "response" && garbage.id === null && garbage.error?.code === ErrorCode.parseError);
    const listParams = await raw('{"jsonrpc":"2.0","id":7,"method":"index.status","params":[1]}');
    assert.ok(listParams.kind === "response" && listParams.id === 7 && listParams.error?.code === ErrorCode.invalidParams);
    const oldVersion = await raw('{"jsonrpc":"1.0","id":8,"method":"index.status"}');
    assert.ok(oldVersion.kind === "response" && oldVersion.id === 8 && oldVersion.error?.code === ErrorCode.invalidRequest);

    assert.equal(asIndexStatus(await client.call("index.status", {})).ready, true);
  });

  it("subscribes to every event and sees index.changed when a note is written", async () => {
    const subscribed = await client.request("events.subscribe", { events: [...EVENT_NAMES] });
    assert.ok(isRecord(subscribed));
    assert.deepEqual([...(subscribed["subscribed"] as string[])].sort(), [...EVENT_NAMES].sort());
    writeFileSync(`${VAULT}/Plugin event.md`, "# Plugin event\n\nWritten by the plugin test; see [[Alice]].\n");
    const change = await waitFor("index.changed", () => changes.find((c) => c.paths.includes("Plugin event.md")));
    assert.ok(change.notes >= 11);
    const back = asBacklinks(await client.call("note.backlinks", { note: "Alice" }));
    assert.ok(back.backlinks.some((b) => b.source === "Plugin event.md"));
  });

  it("builds the relations pane from the daemon and refreshes it on index.changed", async () => {
    const views: PaneView[] = [];
    const readNote = async (path: string): Promise<{ aliases: string[]; body: string }> => ({
      aliases: path === AUTH ? ["auth"] : [],
      body: readFileSync(`${VAULT}/${path}`, "utf8"),
    });
    const pane = new PaneController(client, readNote, (v) => views.push(v), () => buildTaxonomy(), {
      debounceMs: 50,
      mentionsEveryMs: 0,
      relatedEveryMs: 0,
      lintEveryMs: 0,
      relatedLimit: 5,
      showRelated: true,
      showUnlinked: true,
    });
    const off = client.on("index.changed", (p) => {
      const change = asIndexChanged(p);
      if (change !== null) pane.onIndexChanged(change);
    });
    const latest = (): PaneModel => {
      const v = views[views.length - 1];
      assert.ok(v !== undefined && v.kind === "model", JSON.stringify(v));
      return v.model;
    };
    try {
      await pane.setActive(AUTH);
      const m = latest();
      const groups = Object.fromEntries(m.relations.map((g) => [g.relation, g]));
      assert.deepEqual(groups["depends_on"]?.items.map((i) => i.path), ["services/Session Store.md", "services/User Directory.md"]);
      assert.equal(groups["depends_on"]?.inverse, "required_by");
      const decided = groups["decided_by"]?.items[0];
      assert.ok(decided !== undefined && decided.path === ADR7 && decided.explicit && decided.implied, "stated here and implied by ADR-7's decides");
      assert.ok(m.linked.some((l) => l.source === "Welcome.md" && l.lines[0]?.context.includes("[[Auth Service]]")));
      assert.equal(m.banner, null);
      assert.ok(m.related.every((r) => r.path !== AUTH));

      // another note gains a link and another mentions it in plain words: the pane follows
      writeFileSync(`${VAULT}/Plugin linked.md`, "# Plugin linked\n\nDepends on the [[Auth Service]] for login.\n");
      writeFileSync(`${VAULT}/Plugin unlinked.md`, "# Plugin unlinked\n\nWhen the auth service is down nobody can log in.\n");
      await waitFor("the pane to show the new mentions", () => {
        const v = views[views.length - 1];
        if (v?.kind !== "model") return null;
        const linked = v.model.linked.some((l) => l.source === "Plugin linked.md");
        const unlinked = v.model.unlinked.some((u) => u.source === "Plugin unlinked.md");
        return linked && unlinked ? true : null;
      });
      const mention = latest().unlinked.find((u) => u.source === "Plugin unlinked.md");
      assert.ok(mention !== undefined && mention.context.includes("auth service"));
      const linkedText = pane.linkMentionText(readFileSync(`${VAULT}/Plugin unlinked.md`, "utf8"), mention, (t) => `[[Auth Service|${t}]]`);
      assert.ok(linkedText?.includes("When the [[Auth Service|auth service]] is down"));

      // a superseded decision gets its banner, and its relations from both ends
      await pane.setActive(ADR6);
      const adr6 = latest();
      assert.equal(adr6.banner?.by, ADR7);
      const rel6 = Object.fromEntries(adr6.relations.map((g) => [g.relation, g.items.map((i) => [i.path, i.explicit, i.implied])]));
      assert.deepEqual(rel6["supersedes"], [[ADR5, true, true]]); // ADR-5 says superseded_by ADR-6 too
      assert.deepEqual(rel6["superseded_by"], [[ADR7, false, true]]);
      await pane.setActive(ADR5);
      assert.equal(latest().banner?.by, ADR6);
      assert.equal(latest().banner?.current, ADR7, "graph.current follows the chain to the end");

      // lint findings for this note only, and the broken link marked
      await pane.setActive("services/Session Store.md");
      const store = latest();
      // the broken link is shown once, among the outgoing links, not again as a lint finding
      assert.ok(!store.findings.some((f) => f.rule === "dangling_target" && f.target === "Redis Cluster"));
      assert.ok(store.findings.every((f) => f.note === "services/Session Store.md"));
      assert.ok(store.outgoing.some((o) => o.label === "Redis Cluster" && o.broken));
    } finally {
      off();
      pane.dispose();
    }
  });

  it("traverses a typed relation and lists reminders", async () => {
    const result = asTraverse(await client.call("graph.traverse", { note: ADR7, relation: "supersedes", depth: 3 }));
    assert.deepEqual(result.nodes.map((n) => [n.path, n.depth, n.via]), [
      [ADR6, 1, ADR7],
      [ADR5, 2, ADR6],
    ]);
    const back = asTraverse(await client.call("graph.traverse", { note: ADR5, relation: "supersedes", depth: 3, inverse: true }));
    assert.deepEqual(back.nodes.map((n) => n.path), [ADR6, ADR7]);
    const reminders = await fetchReminders(client);
    assert.ok(Array.isArray(reminders));
  });

  it("fails pending and later calls once stopped", async () => {
    const one = new SidecarClient({ socketPath: () => SOCKET, reconnect: false });
    one.start();
    await one.ready(10_000);
    const pending = one.call("lint.run", {});
    one.stop();
    await assert.rejects(pending, DisconnectedError);
    await assert.rejects(one.call("index.status", {}), DisconnectedError);
    assert.equal(one.state, "stopped");
  });
});
