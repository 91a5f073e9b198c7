// Pure logic of the plugin: framing, backoff, discovery, the pane's model, mentions, palette.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { LineDecoder, backoffDelay, parseMessage, RpcError, DEFAULT_BACKOFF } from "../src/client";
import { readVaultConfig, socketCandidates, vaultId, parseWhere, findSocket, type Host } from "../src/discovery";
import { findMention, linkMention, noteNames } from "../src/model/mentions";
import { buildPaneModel, bannerFromCurrent, highlightParts, relatedQuery } from "../src/model/pane";
import { buildTaxonomy, groupRelations, inverseOf } from "../src/model/relations";
import { groupFindings, summarise } from "../src/model/lint";
import { parseSearchInput, editorLine } from "../src/model/search";
import { statusDisplay, needsRecheck } from "../src/model/status";
import { reminderNotice, relativeDue } from "../src/model/reminders";
import { mergeSettings, parseRelationPairs, DEFAULT_SETTINGS } from "../src/settings";
import { asBacklinks, asNoteLinks, type Finding, type SearchHit } from "../src/results";
import { relationChoices } from "../src/model/traverse";

const sha1 = (s: string): string => createHash("sha1").update(s, "utf8").digest("hex");

describe("framing", () => {
  it("splits lines across chunks, including a character split between chunks", () => {
    const d = new LineDecoder();
    const bytes = new TextEncoder().encode('{"a":"é"}\n{"b":1}\n{"c"');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    assert.deepEqual(d.push(bytes.slice(0, cut)), []);
    assert.deepEqual(d.push(bytes.slice(cut)), ['{"a":"é"}', '{"b":1}']);
    assert.deepEqual(d.push(":2}\n\n"), ['{"c":2}']);
  });

  it("classifies responses, errors, notifications and junk", () => {
    assert.deepEqual(parseMessage('{"jsonrpc":"2.0","id":3,"result":{"x":1}}'), {
      kind: "response",
      id: 3,
      result: { x: 1 },
    });
    const err = parseMessage('{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}');
    assert.equal(err.kind, "response");
    assert.ok(err.kind === "response" && err.error instanceof RpcError && err.error.code === -32601);
    const note = parseMessage('{"jsonrpc":"2.0","method":"index.changed","params":{"paths":[]}}');
    assert.deepEqual(note, { kind: "notification", method: "index.changed", params: { paths: [] } });
    assert.equal(parseMessage("{oops").kind, "invalid");
    assert.equal(parseMessage('{"id":1}').kind, "invalid");
  });
});

describe("backoff", () => {
  it("grows by the factor up to the cap, with bounded jitter", () => {
    const b = { ...DEFAULT_BACKOFF, jitter: 0 };
    assert.deepEqual([0, 1, 2, 3].map((a) => backoffDelay(a, b)), [500, 1000, 2000, 4000]);
    assert.equal(backoffDelay(50, b), 30_000);
    const low = backoffDelay(2, DEFAULT_BACKOFF, () => 0);
    const high = backoffDelay(2, DEFAULT_BACKOFF, () => 1);
    assert.equal(low, 1600);
    assert.equal(high, 2000);
  });
});

describe("discovery", () => {
  const host: Host = { env: { XDG_RUNTIME_DIR: "/run/user/1000" }, home: "/home/me", uid: 1000, sha1 };

  it("computes the daemon's vault id", () => {
    assert.equal(vaultId("/home/me/notes", sha1), `notes-${sha1("/home/me/notes").slice(0, 10)}`);
    const long = "/v/" + "ü".repeat(30);
    assert.equal(vaultId(long, sha1).split("-")[0], "ü".repeat(24));
    assert.equal(vaultId("/", sha1), `vault-${sha1("/").slice(0, 10)}`);
  });

  it("lists candidates in the daemon's order, config and env first", () => {
    const id = vaultId("/home/me/notes", sha1);
    assert.deepEqual(socketCandidates("/home/me/notes", host), [
      `/run/user/1000/sidecar/${id}.sock`,
      `/home/me/.local/share/sidecar/${id}/sock/s`,
      `/tmp/sidecar-1000/${id}.sock`,
    ]);
    const cfg = readVaultConfig('[index]\ndata_dir = "~/idx"\n[daemon]\n# c\nsocket_path = "/s/x.sock"\n');
    assert.deepEqual(cfg, { socketPath: "/s/x.sock", dataDir: "~/idx" });
    const withCfg = socketCandidates("/home/me/notes", { ...host, env: {} }, cfg);
    assert.deepEqual(withCfg.slice(0, 2), ["/s/x.sock", "/home/me/idx/sock/s"]);
  });

  it("skips paths the daemon would find too long", () => {
    const deep = { ...host, env: { XDG_RUNTIME_DIR: "/r/" + "x".repeat(90) } };
    assert.ok(socketCandidates("/home/me/notes", deep).every((p) => !p.startsWith("/r/")));
  });

  it("takes the first existing socket, else the first candidate", async () => {
    assert.equal(await findSocket(["/a", "/b"], { isSocket: async (p) => p === "/b" }), "/b");
    assert.equal(await findSocket(["/a", "/b"], { isSocket: async () => false }), "/a");
    assert.equal(parseWhere('{"socket": "/x.sock", "serving": true}'), "/x.sock");
    assert.equal(parseWhere("nope"), null);
  });
});

const links = asNoteLinks({
  path: "services/Auth Service.md",
  outgoing: [
    { target: "services/Session Store.md", raw: "Session Store", relation: "depends_on", line: 0, state: "valid" },
    { target: "decisions/ADR-7.md", raw: "ADR-7", relation: "decided_by", line: 0, state: "valid" },
    { target: null, raw: "Ghost", relation: "depends_on", line: 0, state: "broken" },
    { target: "people/Alice.md", raw: "Alice", relation: "owner", line: 0, state: "valid" },
    { target: "services/Session Store.md", raw: "Session Store", relation: "link", line: 11, state: "valid" },
    { target: null, raw: "Nowhere", relation: "link", line: 14, state: "broken" },
    { target: "services/Session Store.md", raw: "Session Store", relation: "link", line: 12, state: "valid" },
  ],
  incoming: [
    { source: "decisions/ADR-7.md", relation: "decides", line: 0, context: "" },
    { source: "services/Login.md", relation: "required_by", line: 0, context: "" },
    { source: "people/Bob.md", relation: "owner", line: 0, context: "" },
    { source: "Welcome.md", relation: "link", line: 7, context: "Start with [[Auth Service]]." },
    { source: "Welcome.md", relation: "link", line: 7, context: "Start with [[Auth Service]]." },
    { source: "people/Alice.md", relation: "link", line: 7, context: "Owns the [[Auth Service]]." },
  ],
});

describe("relations", () => {
  const tax = buildTaxonomy();

  it("knows inverses, symmetric names and user pairs", () => {
    assert.equal(inverseOf(tax, "supersedes"), "superseded_by");
    assert.equal(inverseOf(tax, "required_by"), "depends_on");
    assert.equal(inverseOf(tax, "contradicts"), "contradicts");
    assert.equal(inverseOf(tax, "owner"), null);
    const custom = buildTaxonomy(parseRelationPairs("blocks = blocked_by\nsame=same\n"));
    assert.equal(inverseOf(custom, "blocked_by"), "blocks");
    assert.equal(inverseOf(custom, "same"), "same");
  });

  it("groups both ends of a fact under this note's name for it", () => {
    const groups = groupRelations(links.outgoing, links.incoming, tax);
    const view = groups.map((g) => [
      g.direction === "in" ? `<-${g.relation}` : g.relation,
      g.inverse,
      g.items.map((i) => `${i.label}:${i.explicit ? "S" : ""}${i.implied ? "I" : ""}`),
    ]);
    assert.deepEqual(view, [
      ["depends_on", "required_by", ["Ghost:S", "services/Login.md:I", "services/Session Store.md:S"]],
      ["decided_by", "decides", ["decisions/ADR-7.md:SI"]],
      ["owner", null, ["people/Alice.md:S"]],
      ["<-owner", null, ["people/Bob.md:I"]],
    ]);
  });
});

describe("pane model", () => {
  const findings: Finding[] = [
    { rule: "orphan", severity: "info", note: "services/Auth Service.md", target: null, relation: null, line: 0, detail: "", fix: "" },
    { rule: "dangling_target", severity: "warning", note: "services/Auth Service.md", target: "Ghost", relation: "depends_on", line: 0, detail: "", fix: "" },
    { rule: "orphan", severity: "info", note: "Other.md", target: null, relation: null, line: 0, detail: "", fix: "" },
  ];
  const related: SearchHit[] = ["services/Auth Service.md", "people/Alice.md", "x/Unlinked.md"].map((path) => ({
    path, chunkId: `${path}#0`, heading: "", startLine: 1, endLine: 1, snippet: "", score: 0.5, status: null, supersededBy: [], current: null,
  }));

  it("builds every section from the RPC results", () => {
    const m = buildPaneModel(
      { path: links.path, links, current: null, unlinked: [], findings, related, reminders: [] },
      buildTaxonomy(),
    );
    assert.equal(m.banner, null);
    assert.deepEqual(m.linked.map((l) => [l.source, l.lines.length]), [["people/Alice.md", 1], ["Welcome.md", 1]]);
    assert.deepEqual(m.outgoing.map((o) => [o.label, o.broken]), [["Nowhere", true], ["services/Session Store.md", false]]);
    // the broken [[Ghost]] relation is shown once, under relations, not again as a lint finding
    assert.deepEqual(m.findings.map((f) => f.rule), ["orphan"]);
    assert.deepEqual(m.related.map((r) => [r.path, r.linked]), [["people/Alice.md", true], ["x/Unlinked.md", false]]);
  });

  it("lists every occurrence, property links included, with the link highlighted", () => {
    const backlinks = asBacklinks({
      path: links.path,
      backlinks: [
        { source: "Welcome.md", relation: "link", line: 7, text: "", context: "See [[Auth Service]] and [[auth service|it]].", match: [4, 20] },
        { source: "Welcome.md", relation: "link", line: 7, text: "", context: "See [[Auth Service]] and [[auth service|it]].", match: [25, 44] },
        { source: "Welcome.md", relation: "link", line: 9, text: "", context: "Later [[Auth Service#Tokens]].", match: [6, 29] },
        { source: "people/Alice.md", relation: "owns", line: 3, text: "", context: "owns: \"[[Auth Service]]\"", match: [7, 23] },
      ],
    }).backlinks;
    const m = buildPaneModel(
      { path: links.path, links, current: null, unlinked: [], findings: [], related: [], reminders: [], backlinks },
      buildTaxonomy(),
    );
    assert.deepEqual(m.linked.map((l) => [l.source, l.lines.map((x) => x.line)]), [["people/Alice.md", [3]], ["Welcome.md", [7, 7, 9]]]);
    const second = m.linked[1]?.lines[1];
    assert.ok(second !== undefined);
    assert.deepEqual(highlightParts(second.context, second.match), ["See [[Auth Service]] and ", "[[auth service|it]]", "."]);
    assert.deepEqual(highlightParts("text", null), ["text", "", ""]);
  });

  it("shows who supersedes a note and which note is current", () => {
    const old = asNoteLinks({
      path: "ADR-5.md",
      outgoing: [{ target: "ADR-6.md", raw: "ADR-6", relation: "superseded_by", line: 0, state: "valid" }],
      incoming: [],
    });
    const m = buildPaneModel(
      { path: "ADR-5.md", links: old, current: null, unlinked: [], findings: [], related: [], reminders: [] },
      buildTaxonomy(),
    );
    assert.deepEqual(m.banner, { current: "ADR-6.md", by: "ADR-6.md", chain: ["ADR-5.md", "ADR-6.md"] });
    assert.deepEqual(bannerFromCurrent({ path: "ADR-5.md", current: "ADR-7.md", chain: ["ADR-5.md", "ADR-6.md", "ADR-7.md"] }), {
      current: "ADR-7.md",
      by: "ADR-6.md",
      chain: ["ADR-5.md", "ADR-6.md", "ADR-7.md"],
    });
    assert.equal(bannerFromCurrent({ path: "ADR-7.md", current: "ADR-7.md", chain: ["ADR-7.md"] }), null);
  });

  it("builds the related-notes query from title and prose", () => {
    const q = relatedQuery("a/Auth Service.md", "---\ntags: [x]\n---\n# Auth\n\nSee [[Session Store|the store]] and [docs](d.md).\n```\ncode\n```\n");
    assert.equal(q, "Auth Service. Auth See the store and docs.");
  });

  it("sends prose, never search syntax, as the related query", () => {
    const q = relatedQuery("Store.md", 'Keys expire (see "TTL") -daily, tag:ops OR /tmp/ at 10:30 *now*.');
    assert.equal(q, "Store. Keys expire see TTL daily, tag ops or tmp/ at 10 30 now .");
  });
});

describe("mentions", () => {
  it("finds plain-text mentions as whole words, outside links and code", () => {
    assert.deepEqual(findMention("ask the auth service team", ["Auth Service"]), { index: 8, text: "auth service" });
    assert.equal(findMention("see [[Auth Service]] or `Auth Service`", ["Auth Service"]), null);
    assert.equal(findMention("AuthServiceX", ["AuthService"]), null);
    assert.deepEqual(findMention("[[Auth Service]] then Auth Service", ["Auth Service"]), { index: 22, text: "Auth Service" });
  });

  it("links the mention on its line, or the first one when the line moved", () => {
    const text = "# T\n\nWe use Session Store here.\n";
    const wiki = (m: string): string => (m === "Session Store" ? "[[Session Store]]" : `[[Session Store|${m}]]`);
    assert.equal(linkMention(text, 3, ["Session Store"], wiki), "# T\n\nWe use [[Session Store]] here.\n");
    assert.equal(linkMention("a\nthe session store\n", 1, ["Session Store"], wiki), "a\nthe [[Session Store|session store]]\n");
    assert.equal(linkMention("[[Session Store]]\n", 1, ["Session Store"], wiki), null);
  });

  it("names a note by its file name and aliases", () => {
    assert.deepEqual(noteNames("services/Session Store.md", ["sessions db", "Session Store"]), ["Session Store", "sessions db"]);
  });
});

describe("palette, lint report, status, reminders, settings", () => {
  it("parses mode prefixes", () => {
    assert.deepEqual(parseSearchInput("/l redis ttl", "hybrid"), { mode: "lexical", query: "redis ttl" });
    assert.deepEqual(parseSearchInput("/sem  tokens", "hybrid"), { mode: "semantic", query: "tokens" });
    assert.deepEqual(parseSearchInput("/usr/bin", "lexical"), { mode: "lexical", query: "/usr/bin" });
    assert.deepEqual(parseSearchInput(" plain ", "semantic"), { mode: "semantic", query: "plain" });
    assert.equal(editorLine(12), 11);
    assert.equal(editorLine(0), 0);
  });

  it("groups lint findings by severity then rule", () => {
    const f = (rule: string, severity: string, note: string): Finding => ({
      rule, severity, note, target: null, relation: null, line: 1, detail: "", fix: "",
    });
    const groups = groupFindings([f("orphan", "info", "b"), f("self_edge", "error", "a"), f("orphan", "info", "a")]);
    assert.deepEqual(groups.map((g) => [g.severity, g.rule, g.findings.map((x) => x.note)]), [
      ["error", "self_edge", ["a"]],
      ["info", "orphan", ["a", "b"]],
    ]);
    assert.equal(summarise([f("a", "info", "x"), f("b", "error", "y"), f("c", "info", "z")]), "1 error, 2 infos");
  });

  it("says connected, indexing or down", () => {
    const status = { notes: 10, chunks: 14, pending: 0, lastIndexed: null, model: "tiny", ready: true, queue: 0 };
    assert.equal(statusDisplay("connected", status, "").text, "Sidecar: connected");
    assert.equal(statusDisplay("connected", { ...status, pending: 3 }, "").text, "Sidecar: indexing…");
    assert.equal(statusDisplay("down", null, "ENOENT").level, "down");
    assert.match(statusDisplay("down", null, "ENOENT").tooltip, /ENOENT/);
    assert.equal(needsRecheck({ ...status, ready: false }), true);
    assert.equal(needsRecheck(status), false);
  });

  it("words reminders", () => {
    const r = (title: string) => ({ id: title, title, dueAt: null, path: null, content: "" });
    assert.equal(reminderNotice([]), null);
    assert.equal(reminderNotice([r("a")]), "1 reminder is due:\n• a");
    assert.match(reminderNotice([r("a"), r("b"), r("c"), r("d")]) ?? "", /and 1 more/);
    const now = Date.parse("2026-11-29T10:00:00Z");
    assert.equal(relativeDue("2026-11-29T13:00:00Z", now), "in 3 h");
    assert.equal(relativeDue("2026-11-27T10:00:00Z", now), "2 d ago");
  });

  it("keeps known settings of the right type", () => {
    const s = mergeSettings({ socketPath: "/x", searchLimit: "many", bogus: 1 });
    assert.equal(s.socketPath, "/x");
    assert.equal(s.searchLimit, DEFAULT_SETTINGS.searchLimit);
    assert.ok(!("bogus" in s));
  });

  it("offers both directions of each relation for traversal", () => {
    const choices = relationChoices(buildTaxonomy(), "supersed");
    assert.deepEqual(choices.map((c) => `${c.inverse ? "<-" : ""}${c.relation}`), [
      "supersedes", "superseded_by", "<-supersedes", "<-superseded_by",
    ]);
    assert.deepEqual(relationChoices(buildTaxonomy(), "blocks").map((c) => c.relation), ["blocks"]);
  });
});
