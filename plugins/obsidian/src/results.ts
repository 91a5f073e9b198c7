/**
 * Result shapes, as DESIGN.md section 7 and the daemon describe them, with decoders that check
 * what comes off the wire. The registry has params models but no result models yet, so these are
 * written by hand; the integration test decodes real answers with them.
 */
import {
  ResultShapeError,
  isRecord,
  num,
  records,
  str,
  strOrNull,
  strings,
} from "./guards";

export interface IndexStatus {
  notes: number;
  chunks: number;
  pending: number;
  lastIndexed: string | null;
  model: string;
  ready: boolean;
  queue: number;
}

export interface OutgoingEdge {
  target: string | null;
  raw: string;
  relation: string;
  text: string;
  line: number;
  anchor: string;
  state: string; // valid | broken | ambiguous | attachment ...
}

export interface IncomingEdge {
  source: string;
  relation: string;
  line: number;
  text: string;
  context: string;
}

export interface NoteLinks {
  path: string;
  outgoing: OutgoingEdge[];
  incoming: IncomingEdge[];
}

export interface SearchHit {
  path: string;
  chunkId: string;
  heading: string;
  startLine: number;
  endLine: number;
  snippet: string;
  score: number;
  status: string | null;
  /** The notes that supersede this one, and the newest note of that chain. */
  supersededBy: string[];
  current: string | null;
}

export interface Finding {
  rule: string;
  severity: string;
  note: string;
  target: string | null;
  relation: string | null;
  line: number;
  detail: string;
  fix: string;
}

export interface TraverseNode {
  path: string;
  depth: number;
  via: string | null;
}

export interface Current {
  path: string;
  current: string;
  chain: string[];
}

export interface Reminder {
  id: string;
  title: string;
  dueAt: string | null;
  path: string | null;
  content: string;
}

export interface Mention {
  source: string;
  /** 1-based line of the mention in `source`. */
  line: number;
  /** The line, trimmed. */
  context: string;
  /** The name as written there. */
  text: string;
  /** `source` also links to the note somewhere else. */
  linksElsewhere: boolean;
}

function need(ok: boolean, method: string, what: string): void {
  if (!ok) throw new ResultShapeError(method, what);
}

export function asIndexStatus(x: unknown): IndexStatus {
  need(isRecord(x), "index.status", "not an object");
  const r = x as Record<string, unknown>;
  const daemon = isRecord(r["daemon"]) ? r["daemon"] : {};
  return {
    notes: num(r["notes"]),
    chunks: num(r["chunks"]),
    pending: num(r["pending"]),
    lastIndexed: strOrNull(r["last_indexed"]),
    model: str(r["model"]),
    ready: daemon["ready"] !== false,
    queue: num(daemon["queue"]),
  };
}

export function asNoteLinks(x: unknown): NoteLinks {
  need(isRecord(x) && typeof x["path"] === "string", "note.links", "no path");
  const r = x as Record<string, unknown>;
  return {
    path: str(r["path"]),
    outgoing: records(r["outgoing"]).map((e) => ({
      target: strOrNull(e["target"]),
      raw: str(e["raw"]),
      relation: str(e["relation"], "link"),
      text: str(e["text"]),
      line: num(e["line"]),
      anchor: str(e["anchor"]),
      state: str(e["state"], "valid"),
    })),
    incoming: records(r["incoming"]).map(asIncoming),
  };
}

function asIncoming(e: Record<string, unknown>): IncomingEdge {
  return {
    source: str(e["source"]),
    relation: str(e["relation"], "link"),
    line: num(e["line"]),
    text: str(e["text"]),
    context: str(e["context"]),
  };
}

/** One occurrence of a link to the note: its own line, and where the link sits in `context`. */
export interface Backlink extends IncomingEdge {
  match: [number, number] | null;
}

export function asBacklinks(x: unknown): { path: string; backlinks: Backlink[] } {
  need(isRecord(x) && Array.isArray(x["backlinks"]), "note.backlinks", "no backlinks list");
  const r = x as Record<string, unknown>;
  return { path: str(r["path"]), backlinks: records(r["backlinks"]).map(asBacklink) };
}

function asBacklink(e: Record<string, unknown>): Backlink {
  const m = e["match"];
  const match: [number, number] | null =
    Array.isArray(m) && m.length === 2 && typeof m[0] === "number" && typeof m[1] === "number" ? [m[0], m[1]] : null;
  return { ...asIncoming(e), match };
}

export function asSearch(x: unknown): { query: string; mode: string; results: SearchHit[] } {
  need(isRecord(x) && Array.isArray(x["results"]), "search", "no results list");
  const r = x as Record<string, unknown>;
  return {
    query: str(r["query"]),
    mode: str(r["mode"]),
    results: records(r["results"]).map((h) => ({
      path: str(h["path"]),
      chunkId: str(h["chunk_id"]),
      heading: str(h["heading"]),
      startLine: num(h["start_line"], 1),
      endLine: num(h["end_line"], 1),
      snippet: str(h["snippet"]),
      score: num(h["score"]),
      status: strOrNull(h["status"]),
      supersededBy: typeof h["superseded_by"] === "string" ? [h["superseded_by"]] : strings(h["superseded_by"]),
      current: strOrNull(h["current"]),
    })),
  };
}

export function asLint(x: unknown): { findings: Finding[]; failed: boolean } {
  need(isRecord(x) && Array.isArray(x["findings"]), "lint.run", "no findings list");
  const r = x as Record<string, unknown>;
  return {
    failed: r["failed"] === true,
    findings: records(r["findings"]).map((f) => ({
      rule: str(f["rule"]),
      severity: str(f["severity"], "info"),
      note: str(f["note"]),
      target: strOrNull(f["target"]),
      relation: strOrNull(f["relation"]),
      line: num(f["line"]),
      detail: str(f["detail"]),
      fix: str(f["fix"]),
    })),
  };
}

export function asCurrent(x: unknown): Current {
  need(isRecord(x) && typeof x["path"] === "string", "graph.current", "no path");
  const r = x as Record<string, unknown>;
  const path = str(r["path"]);
  return { path, current: str(r["current"], path), chain: strings(r["chain"]) };
}

export function asTraverse(x: unknown): { root: string; relation: string; nodes: TraverseNode[] } {
  need(isRecord(x) && Array.isArray(x["nodes"]), "graph.traverse", "no nodes list");
  const r = x as Record<string, unknown>;
  return {
    root: str(r["root"]),
    relation: str(r["relation"]),
    nodes: records(r["nodes"]).map((n) => ({
      path: str(n["path"]),
      depth: num(n["depth"], 1),
      // the edge walked to reach the node: {source, relation, target, stated: [...]}
      via: isRecord(n["via"]) ? strOrNull(n["via"]["source"]) : strOrNull(n["via"]),
    })),
  };
}

function asReminder(e: Record<string, unknown>): Reminder {
  const id = str(e["id"]);
  return {
    id,
    title: str(e["title"], id),
    dueAt: strOrNull(e["due_at"]),
    path: strOrNull(e["path"]),
    content: str(e["content"], str(e["body"])),
  };
}

export function asReminders(x: unknown): { due: Reminder[]; upcoming: Reminder[] } {
  need(isRecord(x) && Array.isArray(x["due"]), "reminders.due", "no due list");
  const r = x as Record<string, unknown>;
  return { due: records(r["due"]).map(asReminder), upcoming: records(r["upcoming"]).map(asReminder) };
}

/** `note.mentions`: `{path, names, mentions: [{source, line, column, name, text, links_elsewhere}]}`. */
export function asMentions(x: unknown): { names: string[]; mentions: Mention[] } {
  need(isRecord(x) && Array.isArray(x["mentions"]), "note.mentions", "no mentions list");
  const r = x as Record<string, unknown>;
  return {
    names: strings(r["names"]),
    mentions: records(r["mentions"]).map((m) => ({
      source: str(m["source"]),
      line: num(m["line"], 1),
      context: str(m["text"]),
      text: str(m["name"]),
      linksElsewhere: m["links_elsewhere"] === true,
    })),
  };
}
