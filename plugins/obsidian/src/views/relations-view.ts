/**
 * The Relations pane: an ItemView in the right sidebar that follows the active note. The
 * PaneController decides what to fetch and when; this file only renders its model with
 * `createEl` and turns clicks into navigation or, for "link", one explicit edit.
 */
import { ItemView, Notice, TFile, type WorkspaceLeaf } from "obsidian";
import { errorText } from "../client";
import { highlightParts, type PaneModel } from "../model/pane";
import { relationLabel, type RelationGroup } from "../model/relations";
import { ruleName } from "../model/lint";
import { relativeDue } from "../model/reminders";
import { PaneController, type NoteText, type PaneView } from "../pane-controller";
import type { Mention } from "../results";
import type SidecarPlugin from "../main";
import { displayName, noteLink, openAt, section } from "./dom";

export const VIEW_TYPE_RELATIONS = "sidecar-relations";
/** Past this many unlinked mentions the section starts collapsed, as Obsidian's does. */
const UNLINKED_OPEN = 3;

export class RelationsView extends ItemView {
  readonly controller: PaneController;
  private readonly collapsed = new Set<string>();

  constructor(
    leaf: WorkspaceLeaf,
    private readonly plugin: SidecarPlugin,
  ) {
    super(leaf);
    this.controller = new PaneController(
      plugin.client,
      (path) => this.readNote(path),
      (view) => this.draw(view),
      () => plugin.taxonomy(),
      plugin.paneOptions(),
    );
  }

  getViewType(): string {
    return VIEW_TYPE_RELATIONS;
  }

  getDisplayText(): string {
    return "Relations";
  }

  override getIcon(): string {
    return "git-fork";
  }

  override async onOpen(): Promise<void> {
    this.contentEl.addClass("sidecar-pane");
    this.registerEvent(this.app.workspace.on("file-open", (file) => void this.follow(file)));
    this.controller.setReminders(this.plugin.dueReminders);
    await this.follow(this.app.workspace.getActiveFile());
  }

  override async onClose(): Promise<void> {
    this.controller.dispose();
  }

  /** Show `file` (the active file); `force` re-fetches even if it is already shown. */
  async follow(file: TFile | null, force = false): Promise<void> {
    const path = file !== null && file.extension === "md" ? file.path : null;
    if (path === null && file !== null) return; // a PDF or canvas: keep showing the last note
    if (this.plugin.client.state !== "connected") {
      this.controller.showMessage("The sidecar daemon is not connected; retrying in the background.");
      return;
    }
    await this.controller.setActive(path, force);
  }

  private async readNote(path: string): Promise<NoteText | null> {
    const file = this.app.vault.getAbstractFileByPath(path);
    if (!(file instanceof TFile)) return null;
    const cache = this.app.metadataCache.getFileCache(file);
    const raw: unknown = cache?.frontmatter?.["aliases"] ?? cache?.frontmatter?.["alias"];
    const aliases = Array.isArray(raw) ? raw.filter((a): a is string => typeof a === "string") : typeof raw === "string" ? [raw] : [];
    return { aliases, body: await this.app.vault.cachedRead(file) };
  }

  // ----------------------------------------------------------------------------- rendering

  private draw(view: PaneView): void {
    const root = this.contentEl;
    root.empty();
    if (view.kind === "empty") {
      root.createDiv({ cls: "sidecar-empty", text: view.message });
      return;
    }
    if (view.kind === "error") {
      root.createDiv({ cls: "sidecar-error", text: `${displayName(view.path)}: ${view.message}` });
      return;
    }
    this.drawModel(root, view.model);
  }

  private drawModel(root: HTMLElement, m: PaneModel): void {
    root.createDiv({ cls: "sidecar-pane-title", text: displayName(m.path) });
    if (m.banner !== null) {
      const banner = root.createDiv({ cls: "sidecar-banner" });
      banner.createSpan({ text: "Superseded by " });
      noteLink(this.app, banner, this, m.banner.by);
      if (m.banner.current !== m.banner.by) {
        banner.createSpan({ text: " → current: " });
        noteLink(this.app, banner, this, m.banner.current);
      }
    }
    this.drawRelations(root, m.relations);
    this.drawLinked(root, m);
    this.drawUnlinked(root, m.unlinked);
    this.drawOutgoing(root, m);
    this.drawFindings(root, m);
    this.drawRelated(root, m);
    this.drawReminders(root, m);
    for (const note of m.notes) root.createDiv({ cls: "sidecar-note", text: note });
  }

  private drawRelations(root: HTMLElement, groups: RelationGroup[]): void {
    const body = section(root, "relations", "Relations", groups.length, this.collapsed);
    if (groups.length === 0) body.createDiv({ cls: "sidecar-none", text: "No typed relations." });
    for (const g of groups) {
      const head = body.createDiv({ cls: "sidecar-relation" });
      head.createSpan({ cls: "sidecar-relation-name", text: g.direction === "in" ? `← ${relationLabel(g.relation)}` : relationLabel(g.relation) });
      if (g.inverse !== null && g.inverse !== g.relation) {
        head.createSpan({ cls: "sidecar-inverse", text: ` (inverse: ${relationLabel(g.inverse)})` });
      }
      const list = body.createEl("ul", { cls: "sidecar-list" });
      for (const item of g.items) {
        const li = list.createEl("li");
        if (item.path === null) noteLink(this.app, li, this, item.label, { broken: true, label: item.label });
        else noteLink(this.app, li, this, item.path);
        const how = item.explicit && item.implied ? "both ends" : item.explicit ? "stated" : "implied";
        li.createSpan({ cls: `sidecar-badge sidecar-${how.replace(" ", "-")}`, text: how });
      }
    }
  }

  private drawLinked(root: HTMLElement, m: PaneModel): void {
    const count = m.linked.reduce((n, l) => n + l.lines.length, 0);
    const body = section(root, "linked", "Linked mentions", count, this.collapsed);
    for (const mention of m.linked) {
      const item = body.createDiv({ cls: "sidecar-mention" });
      noteLink(this.app, item, this, mention.source);
      item.createSpan({ cls: "sidecar-count", text: String(mention.lines.length) });
      for (const { line, context, relation, match } of mention.lines) {
        const quote = item.createDiv({ cls: "sidecar-context" });
        if (context === "") quote.setText(line > 0 ? `${relationLabel(relation)} (property), line ${line}` : `${relationLabel(relation)} (property)`);
        const [before, hit, after] = highlightParts(context, match);
        if (before !== "") quote.appendText(before);
        if (hit !== "") quote.createSpan({ cls: "search-result-file-matched-text", text: hit });
        if (after !== "") quote.appendText(after);
        quote.addEventListener("click", () => void openAt(this.app, mention.source, line));
      }
    }
  }

  private drawUnlinked(root: HTMLElement, unlinked: Mention[]): void {
    if (!this.plugin.settings.showUnlinked) return;
    const body = section(root, "unlinked", "Unlinked mentions", unlinked.length, this.collapsed, unlinked.length > UNLINKED_OPEN);
    for (const mention of unlinked) {
      const item = body.createDiv({ cls: "sidecar-mention" });
      noteLink(this.app, item, this, mention.source, { line: mention.line });
      if (mention.linksElsewhere) item.createSpan({ cls: "sidecar-badge", text: "links elsewhere" });
      const button = item.createEl("button", { cls: "sidecar-link-button", text: "Link" });
      button.addEventListener("click", () => void this.linkMention(mention, button));
      const quote = item.createDiv({ cls: "sidecar-context", text: mention.context });
      quote.addEventListener("click", () => void openAt(this.app, mention.source, mention.line));
    }
  }

  private drawOutgoing(root: HTMLElement, m: PaneModel): void {
    const broken = m.outgoing.filter((o) => o.broken).length;
    const title = broken > 0 ? `Outgoing links (${broken} broken)` : "Outgoing links";
    const body = section(root, "outgoing", title, m.outgoing.length, this.collapsed);
    const list = body.createEl("ul", { cls: "sidecar-list" });
    for (const o of m.outgoing) {
      const li = list.createEl("li");
      if (o.target === null || o.broken) {
        noteLink(this.app, li, this, o.label, { broken: true, label: o.label, title: `${o.state} link, line ${o.line}` });
        li.createSpan({ cls: "sidecar-badge sidecar-broken", text: o.state === "valid" ? "broken" : o.state });
        li.addEventListener("click", () => void openAt(this.app, m.path, o.line));
      } else {
        noteLink(this.app, li, this, o.target);
      }
    }
  }

  private drawFindings(root: HTMLElement, m: PaneModel): void {
    const body = section(root, "lint", "Lint", m.findings.length, this.collapsed);
    if (m.findings.length === 0) body.createDiv({ cls: "sidecar-none", text: "No findings for this note." });
    for (const f of m.findings) {
      const row = body.createDiv({ cls: `sidecar-finding sidecar-${f.severity}` });
      row.createSpan({ cls: "sidecar-badge", text: f.severity });
      row.createSpan({ cls: "sidecar-rule", text: ` ${ruleName(f.rule)}`, attr: { title: f.rule } });
      row.createDiv({ cls: "sidecar-detail", text: f.detail });
      if (f.fix !== "") row.createDiv({ cls: "sidecar-fix", text: f.fix });
      row.addEventListener("click", () => void openAt(this.app, f.note, f.line));
    }
  }

  private drawRelated(root: HTMLElement, m: PaneModel): void {
    if (!this.plugin.settings.showRelated) return;
    const body = section(root, "related", "Related by meaning", m.related.length, this.collapsed);
    const list = body.createEl("ul", { cls: "sidecar-list" });
    for (const r of m.related) {
      const li = list.createEl("li");
      noteLink(this.app, li, this, r.path, { title: r.heading || r.path });
      li.createSpan({ cls: "sidecar-score", text: ` ${r.score.toFixed(2)}` });
      if (r.linked) li.createSpan({ cls: "sidecar-badge", text: "linked" });
    }
  }

  private drawReminders(root: HTMLElement, m: PaneModel): void {
    if (m.reminders.length === 0) return;
    const body = section(root, "reminders", "Due reminders", m.reminders.length, this.collapsed);
    for (const r of m.reminders) {
      const row = body.createDiv({ cls: "sidecar-reminder" });
      if (r.path !== null) noteLink(this.app, row, this, r.path, { label: r.title });
      else row.createSpan({ text: r.title });
      row.createSpan({ cls: "sidecar-when", text: ` ${relativeDue(r.dueAt, Date.now())}` });
    }
  }

  /** One click: replace the mention with a link, through the vault API (undo-able in the editor). */
  private async linkMention(mention: Mention, button: HTMLButtonElement): Promise<void> {
    const active = this.controller.activePath;
    const source = this.app.vault.getAbstractFileByPath(mention.source);
    const target = active === null ? null : this.app.vault.getAbstractFileByPath(active);
    if (!(source instanceof TFile) || !(target instanceof TFile)) return;
    button.disabled = true;
    try {
      let changed = false;
      await this.app.vault.process(source, (text) => {
        const next = this.controller.linkMentionText(text, mention, (matched) =>
          this.app.fileManager.generateMarkdownLink(target, source.path, undefined, matched === target.basename ? undefined : matched),
        );
        changed = next !== null;
        return next ?? text;
      });
      new Notice(changed ? `Linked ${displayName(source.path)} → ${target.basename}` : "That mention is gone or already linked.");
    } catch (e) {
      new Notice(`Could not link the mention: ${errorText(e)}`);
      button.disabled = false;
    }
  }
}
