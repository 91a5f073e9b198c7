/**
 * Fetches and schedules the Relations pane for the active note. No `obsidian` import: the view
 * hands it the active path and a renderer; the tests drive it against the real daemon.
 *
 * Never on a keystroke: it refreshes when the active note changes and when the daemon says the
 * index changed (after a save, debounced here once more). Links and the supersedes chain are
 * re-read on any change (in-memory queries; another note may have gained a link here). The
 * costlier parts are throttled, since Obsidian saves every couple of seconds while one types:
 * unlinked mentions (a scan of the vault's files) when another note changed, "related by
 * meaning" (an embedding query) when this note changed, the whole-vault lint after any change,
 * each at most once per its interval, with one trailing refresh so nothing stays stale. A reply
 * for a note that is no longer active is dropped, and an unchanged model is not re-rendered.
 */
import { ErrorCode, RpcError, errorText } from "./client";
import type { IndexChanged } from "./events";
import type { KnownMethod, KnownMethods } from "./methods";
import { linkMention, noteNames } from "./model/mentions";
import { DEFAULT_LIMITS, buildPaneModel, relatedQuery, type PaneModel } from "./model/pane";
import type { Taxonomy } from "./model/relations";
import {
  asBacklinks,
  asCurrent,
  asLint,
  asMentions,
  asNoteLinks,
  asReminders,
  asSearch,
  type Backlink,
  type Current,
  type Finding,
  type Mention,
  type NoteLinks,
  type Reminder,
  type SearchHit,
} from "./results";

export interface Rpc {
  call<M extends KnownMethod>(method: M, params: KnownMethods[M]["params"]): Promise<unknown>;
}

export interface NoteText {
  aliases: string[];
  body: string;
}

export interface PaneOptions {
  debounceMs: number;
  /** Unlinked mentions read every note on the daemon's side: at most this often. */
  mentionsEveryMs: number;
  /** "Related by meaning" embeds a query: at most this often while the note is being edited. */
  relatedEveryMs: number;
  /** Graph lint covers the whole vault: at most this often. */
  lintEveryMs: number;
  relatedLimit: number;
  showRelated: boolean;
  showUnlinked: boolean;
}

export const DEFAULT_PANE_OPTIONS: PaneOptions = {
  debounceMs: 400,
  mentionsEveryMs: 5_000,
  relatedEveryMs: 30_000,
  lintEveryMs: 15_000,
  relatedLimit: 8,
  showRelated: true,
  showUnlinked: true,
};

/** A part of the pane re-fetched at most once per `everyMs` after it went stale. */
export class Staleness {
  private stale = true;
  private at = -Infinity;

  constructor(private readonly everyMs: number) {}

  invalidate(): void {
    this.stale = true;
  }

  /** Stale and fetchable right away (a new note, a command, a reconnect). */
  reset(): void {
    this.stale = true;
    this.at = -Infinity;
  }

  /** null: fresh; 0: fetch now; otherwise the milliseconds until it may be fetched. */
  wait(now: number): number | null {
    return this.stale ? Math.max(0, this.at + this.everyMs - now) : null;
  }

  fetched(now: number): void {
    this.stale = false;
    this.at = now;
  }
}

export type PaneView =
  | { kind: "empty"; message: string }
  | { kind: "error"; path: string; message: string }
  | { kind: "model"; model: PaneModel };

interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
  now(): number;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

interface Parts {
  links: NoteLinks;
  current: Current | null;
  backlinks: Backlink[] | null;
  unlinked: Mention[];
  related: SearchHit[];
}

export class PaneController {
  private active: string | null = null;
  private parts: Parts | null = null;
  private findings: Finding[] = [];
  private reminders: Reminder[] = [];
  private readonly mentions: Staleness;
  private readonly related: Staleness;
  private readonly lint: Staleness;
  private generation = 0;
  private timer: unknown = null;
  private lastRendered = "";
  private readonly missing = new Set<KnownMethod>();
  private readonly problems = new Map<string, string>();

  constructor(
    private readonly rpc: Rpc,
    private readonly readNote: (path: string) => Promise<NoteText | null>,
    private readonly render: (view: PaneView) => void,
    private readonly taxonomy: () => Taxonomy,
    private readonly options: PaneOptions = DEFAULT_PANE_OPTIONS,
    private readonly timers: Timers = realTimers,
  ) {
    this.mentions = new Staleness(options.mentionsEveryMs);
    this.related = new Staleness(options.relatedEveryMs);
    this.lint = new Staleness(options.lintEveryMs);
  }

  get activePath(): string | null {
    return this.active;
  }

  /** The active note changed (or the pane opened, or the daemon came back): refresh it now. */
  async setActive(path: string | null, force = false): Promise<void> {
    if (path === this.active && this.parts !== null && !force) return;
    this.active = path;
    this.parts = null;
    this.mentions.reset();
    this.related.reset();
    if (force) this.lint.reset();
    this.cancelTimer();
    if (path === null) {
      this.show({ kind: "empty", message: "Open a Markdown note to see its relations." });
      return;
    }
    await this.refresh();
  }

  /** Show a message instead of a note (e.g. while the daemon is down). */
  showMessage(message: string): void {
    this.cancelTimer();
    this.parts = null;
    this.show({ kind: "empty", message });
  }

  /** Re-fetch everything for the active note now (a command, or after reconnecting). */
  async refreshNow(): Promise<void> {
    this.cancelTimer();
    for (const part of [this.mentions, this.related, this.lint]) part.reset();
    await this.refresh();
  }

  /**
   * After a reindex: links may have changed anywhere, mentions of this note only in other
   * notes, its meaning only in itself. Debounced, then throttled per part.
   */
  onIndexChanged(change: IndexChanged): void {
    this.lint.invalidate();
    const active = this.active;
    if (active === null) return;
    if (change.deleted.includes(active)) {
      this.cancelTimer();
      this.parts = null;
      this.show({ kind: "empty", message: `${active} was removed from the index.` });
      return;
    }
    if (change.deleted.length > 0 || change.paths.some((p) => p !== active)) this.mentions.invalidate();
    if (change.paths.includes(active)) this.related.invalidate();
    this.schedule(this.options.debounceMs);
  }

  onLintCompleted(): void {
    this.lint.reset();
    if (this.active !== null) this.schedule(this.options.debounceMs);
  }

  setReminders(reminders: Reminder[]): void {
    this.reminders = reminders;
    this.redraw();
  }

  /** Turn an unlinked mention into a link: returns the new text of the mentioning note. */
  linkMentionText(text: string, mention: Mention, link: (matched: string) => string): string | null {
    const active = this.active;
    if (active === null) return null;
    const names = [mention.text, ...noteNames(active)].filter((n) => n !== "");
    return linkMention(text, mention.line, names, link);
  }

  dispose(): void {
    this.cancelTimer();
    this.generation++;
  }

  // ----------------------------------------------------------------------------- internals

  private schedule(ms: number): void {
    this.cancelTimer();
    this.timer = this.timers.set(() => {
      this.timer = null;
      void this.refresh();
    }, ms);
  }

  private async refresh(): Promise<void> {
    const path = this.active;
    if (path === null) return;
    const generation = ++this.generation;
    const stillActive = (): boolean => generation === this.generation && this.active === path;
    const now = this.timers.now();
    const before = this.parts;
    const due = (part: Staleness): boolean => before === null || part.wait(now) === 0;
    try {
      // every section at once: the pane waits for the slowest, not for the sum
      const [links, current, backlinks, unlinked, related] = await Promise.all([
        this.rpc.call("note.links", { note: path, depth: 1 }).then(asNoteLinks),
        this.current(path),
        this.fetchBacklinks(path),
        due(this.mentions) ? this.fetchMentions(path) : Promise.resolve(before?.unlinked ?? []),
        due(this.related) ? this.fetchRelated(path) : Promise.resolve(before?.related ?? []),
        this.lint.wait(now) === 0 ? this.refreshLint(now) : Promise.resolve(),
      ]);
      if (!stillActive()) return;
      this.parts = { links, current, backlinks, unlinked, related };
      this.redraw();
      // a throttled part that is still stale gets one trailing refresh
      const waits = [this.mentions, this.related, this.lint]
        .map((part) => part.wait(this.timers.now()))
        .filter((w): w is number => w !== null);
      if (waits.length > 0 && this.timer === null) this.schedule(Math.max(50, Math.min(...waits)));
    } catch (e) {
      if (!stillActive()) return;
      this.parts = null;
      this.show({ kind: "error", path, message: errorText(e) });
    }
  }

  private redraw(): void {
    const path = this.active;
    if (path === null || this.parts === null) return;
    const model = buildPaneModel(
      {
        path,
        ...this.parts,
        findings: this.findings,
        reminders: this.reminders,
        notes: [...this.problems.values()],
      },
      this.taxonomy(),
      { ...DEFAULT_LIMITS, related: this.options.relatedLimit },
    );
    this.show({ kind: "model", model });
  }

  private show(view: PaneView): void {
    const key = JSON.stringify(view);
    if (key === this.lastRendered) return; // nothing changed: leave the DOM alone
    this.lastRendered = key;
    this.render(view);
  }

  /** Calls `method` unless the daemon said it does not have it; null then. */
  private async optional<M extends KnownMethod>(
    method: M,
    params: KnownMethods[M]["params"],
  ): Promise<unknown> {
    if (this.missing.has(method)) return null;
    try {
      const result = await this.rpc.call(method, params);
      this.problems.delete(method);
      return result;
    } catch (e) {
      if (e instanceof RpcError && e.code === ErrorCode.methodNotFound) {
        this.missing.add(method);
        return null;
      }
      this.problems.set(method, `${method}: ${errorText(e)}`);
      return null;
    }
  }

  private async current(path: string): Promise<Current | null> {
    const result = await this.optional("graph.current", { note: path });
    return result === null ? null : asCurrent(result);
  }

  private async fetchBacklinks(path: string): Promise<Backlink[] | null> {
    const result = await this.optional("note.backlinks", { note: path });
    return result === null ? null : asBacklinks(result).backlinks;
  }

  private async fetchMentions(path: string): Promise<Mention[]> {
    this.mentions.fetched(this.timers.now());
    if (!this.options.showUnlinked) return [];
    const result = await this.optional("note.mentions", { note: path });
    return result === null ? [] : asMentions(result).mentions;
  }

  private async fetchRelated(path: string): Promise<SearchHit[]> {
    this.related.fetched(this.timers.now());
    if (!this.options.showRelated) return [];
    const text = await this.readNote(path);
    if (text === null) return [];
    const query = relatedQuery(path, text.body);
    const limit = this.options.relatedLimit + 1;
    const found = await this.optional("search", { query, mode: "semantic", limit });
    return found === null ? [] : asSearch(found).results;
  }

  private async refreshLint(now: number): Promise<void> {
    this.lint.fetched(now);
    const result = await this.optional("lint.run", { format: "json", fail_on: "never" });
    if (result !== null) this.findings = asLint(result).findings;
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
  }
}

export async function fetchReminders(rpc: Rpc): Promise<Reminder[] | null> {
  try {
    return asReminders(await rpc.call("reminders.due", {})).due;
  } catch (e) {
    if (e instanceof RpcError && e.code === ErrorCode.methodNotFound) return null;
    throw e;
  }
}
