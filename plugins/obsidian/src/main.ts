/**
 * Vault Sidecar for Obsidian: wiring only. The socket client, discovery and every decision about
 * what to show live in modules without `obsidian` imports (tested in node against the daemon);
 * this file connects them to the workspace, the status bar, commands and settings.
 */
import { FileSystemAdapter, Notice, Plugin, type WorkspaceLeaf } from "obsidian";
import { SidecarClient, errorText } from "./client";
import { asIndexChanged } from "./events";
import { buildTaxonomy, type Taxonomy } from "./model/relations";
import { reminderNotice } from "./model/reminders";
import { needsRecheck, statusDisplay } from "./model/status";
import { resolveSocket } from "./node-host";
import { DEFAULT_PANE_OPTIONS, fetchReminders, type PaneOptions } from "./pane-controller";
import { asIndexStatus, asLint, asReminders, type IndexStatus, type Reminder } from "./results";
import { mergeSettings, parseRelationPairs, type SidecarSettings } from "./settings";
import { HOVER_SOURCE } from "./views/dom";
import { LintModal } from "./views/lint-modal";
import { RelationsView, VIEW_TYPE_RELATIONS } from "./views/relations-view";
import { RemindersModal } from "./views/reminders-modal";
import { SearchModal } from "./views/search-modal";
import { SidecarSettingTab } from "./views/settings-tab";
import { RelationPicker } from "./views/traverse-modal";

const STATUS_RECHECK_MS = 4_000;

export default class SidecarPlugin extends Plugin {
  override settings!: SidecarSettings;
  client!: SidecarClient;
  dueReminders: Reminder[] = [];
  private statusEl!: HTMLElement;
  private status: IndexStatus | null = null;
  private statusTimer: number | null = null;
  private remindedAtStartup = false;
  private cachedTaxonomy: Taxonomy | null = null;

  override async onload(): Promise<void> {
    this.settings = mergeSettings(await this.loadData());
    this.client = new SidecarClient({
      socketPath: () => this.socketPath(),
      log: (message) => console.debug(`[sidecar] ${message}`),
    });
    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("sidecar-status");
    this.statusEl.addEventListener("click", () => void this.activateView());
    this.register(this.client.onState((state) => this.onConnection(state)));
    this.register(this.client.on("index.changed", (p) => this.onIndexChanged(p)));
    this.register(this.client.on("lint.completed", () => this.forEachView((v) => v.controller.onLintCompleted())));
    this.register(this.client.on("reminder.due", (p) => void this.onReminderDue(p)));

    this.registerView(VIEW_TYPE_RELATIONS, (leaf: WorkspaceLeaf) => new RelationsView(leaf, this));
    this.registerHoverLinkSource(HOVER_SOURCE, { display: "Vault Sidecar", defaultMod: true });
    this.addRibbonIcon("git-fork", "Open the relations pane", () => void this.activateView());
    this.addCommands();
    this.addSettingTab(new SidecarSettingTab(this.app, this));
    this.updateStatusBar();
    this.app.workspace.onLayoutReady(() => this.client.start());
  }

  override onunload(): void {
    if (this.statusTimer !== null) window.clearTimeout(this.statusTimer);
    this.client.stop();
  }

  async saveSettings(reconnect = false): Promise<void> {
    await this.saveData(this.settings);
    this.cachedTaxonomy = null;
    if (reconnect) this.client.reconnectNow();
  }

  taxonomy(): Taxonomy {
    this.cachedTaxonomy ??= buildTaxonomy(parseRelationPairs(this.settings.relationPairs));
    return this.cachedTaxonomy;
  }

  paneOptions(): PaneOptions {
    return {
      ...DEFAULT_PANE_OPTIONS,
      relatedLimit: this.settings.relatedLimit,
      showRelated: this.settings.showRelated,
      showUnlinked: this.settings.showUnlinked,
    };
  }

  connectionSummary(): string {
    const d = statusDisplay(this.client.state, this.status, this.client.lastError);
    return `${d.text}. ${d.tooltip}`;
  }

  // ----------------------------------------------------------------------------- connection

  private async socketPath(): Promise<string | null> {
    const adapter = this.app.vault.adapter;
    if (!(adapter instanceof FileSystemAdapter)) return this.settings.socketPath || null;
    return resolveSocket(this.settings, adapter.getBasePath());
  }

  private onConnection(state: string): void {
    this.updateStatusBar();
    if (state !== "connected") {
      this.status = null;
      if (state === "down") this.forEachView((v) => void v.follow(this.app.workspace.getActiveFile()));
      return;
    }
    void this.refreshStatus();
    this.forEachView((v) => void v.follow(this.app.workspace.getActiveFile(), true));
    void this.loadReminders();
  }

  private onIndexChanged(params: unknown): void {
    const change = asIndexChanged(params);
    if (change === null) return;
    this.forEachView((v) => v.controller.onIndexChanged(change));
    this.scheduleStatus(500);
  }

  private scheduleStatus(ms: number): void {
    if (this.statusTimer !== null) window.clearTimeout(this.statusTimer);
    this.statusTimer = window.setTimeout(() => {
      this.statusTimer = null;
      void this.refreshStatus();
    }, ms);
  }

  /** index.status after a change, and again while the daemon is still busy (never otherwise). */
  private async refreshStatus(): Promise<void> {
    try {
      this.status = asIndexStatus(await this.client.call("index.status", {}));
    } catch {
      this.status = null;
    }
    this.updateStatusBar();
    if (needsRecheck(this.status)) this.scheduleStatus(STATUS_RECHECK_MS);
  }

  private updateStatusBar(): void {
    const d = statusDisplay(this.client.state, this.status, this.client.lastError);
    this.statusEl.setText(d.text);
    this.statusEl.setAttr("aria-label", d.tooltip);
    this.statusEl.setAttr("data-tooltip-position", "top");
    this.statusEl.toggleClass("sidecar-down", d.level === "down");
    this.statusEl.toggleClass("sidecar-busy", d.level === "busy");
  }

  // ----------------------------------------------------------------------------- reminders

  private async loadReminders(): Promise<void> {
    try {
      const due = await fetchReminders(this.client);
      if (due === null) return; // this daemon has no reminders yet
      this.dueReminders = due;
      this.forEachView((v) => v.controller.setReminders(due));
      if (this.settings.remindAtStartup && !this.remindedAtStartup) {
        this.remindedAtStartup = true;
        const text = reminderNotice(due);
        if (text !== null) new Notice(text, 15_000);
      }
    } catch (e) {
      console.debug(`[sidecar] reminders: ${errorText(e)}`);
    }
  }

  private async onReminderDue(params: unknown): Promise<void> {
    const r = asReminders({ due: [params] }).due[0];
    if (r !== undefined) new Notice(`Reminder: ${r.title}`, 15_000);
    await this.loadReminders();
  }

  // ----------------------------------------------------------------------------- commands

  private addCommands(): void {
    this.addCommand({ id: "open-relations-pane", name: "Open relations pane", callback: () => void this.activateView() });
    this.addCommand({
      id: "search",
      name: "Search",
      callback: () =>
        new SearchModal(this.app, this.client, this.settings.searchMode, this.settings.searchLimit).open(),
    });
    this.addCommand({ id: "lint-report", name: "Show graph lint report", callback: () => void this.showLint() });
    this.addCommand({
      id: "traverse-relation",
      name: "Traverse relation…",
      checkCallback: (checking) => {
        const file = this.app.workspace.getActiveFile();
        if (file === null || file.extension !== "md") return false;
        if (!checking) new RelationPicker(this.app, this.client, this.taxonomy(), file.path).open();
        return true;
      },
    });
    this.addCommand({ id: "reminders", name: "Reminders", callback: () => void this.showReminders() });
    this.addCommand({ id: "reconnect", name: "Reconnect to the daemon", callback: () => this.client.reconnectNow() });
    this.addCommand({
      id: "refresh-pane",
      name: "Refresh relations pane",
      callback: () => this.forEachView((v) => void v.controller.refreshNow()),
    });
  }

  private async showLint(): Promise<void> {
    try {
      const report = asLint(await this.client.call("lint.run", { format: "json", fail_on: "never" }));
      new LintModal(this.app, report.findings).open();
    } catch (e) {
      new Notice(`Graph lint failed: ${errorText(e)}`);
    }
  }

  private async showReminders(): Promise<void> {
    try {
      const r = asReminders(await this.client.call("reminders.due", {}));
      new RemindersModal(this.app, r.due, r.upcoming).open();
    } catch (e) {
      new Notice(`Reminders unavailable: ${errorText(e)}`);
    }
  }

  async activateView(): Promise<void> {
    const { workspace } = this.app;
    let leaf = workspace.getLeavesOfType(VIEW_TYPE_RELATIONS)[0] ?? null;
    if (leaf === null) {
      leaf = workspace.getRightLeaf(false);
      if (leaf === null) return;
      await leaf.setViewState({ type: VIEW_TYPE_RELATIONS, active: true });
    }
    await workspace.revealLeaf(leaf);
  }

  private forEachView(fn: (view: RelationsView) => void): void {
    for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE_RELATIONS)) {
      if (leaf.view instanceof RelationsView) fn(leaf.view);
    }
  }
}
