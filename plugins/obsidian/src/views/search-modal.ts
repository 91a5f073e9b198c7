/**
 * The search palette: type to search the daemon (hybrid by default; `/l`, `/s`, `/h` switch
 * to lexical, semantic, hybrid), Enter opens the hit at its line.
 */
import { App, SuggestModal } from "obsidian";
import { errorText } from "../client";
import { parseSearchInput, type SearchMode } from "../model/search";
import { asSearch, type SearchHit } from "../results";
import type { Rpc } from "../pane-controller";
import { displayName, openAt } from "./dom";

const DEBOUNCE_MS = 180;

export class SearchModal extends SuggestModal<SearchHit> {
  private token = 0;
  private last: SearchHit[] = [];
  private lastError = "";

  constructor(
    app: App,
    private readonly rpc: Rpc,
    private readonly mode: SearchMode,
    private readonly maxResults: number,
  ) {
    super(app);
    this.setPlaceholder(`Search the vault (${mode}); /l lexical, /s semantic, /h hybrid`);
    this.setInstructions([
      { command: "↵", purpose: "open at the matching line" },
      { command: "/l /s /h", purpose: "lexical, semantic, hybrid" },
    ]);
    this.emptyStateText = "No matches.";
  }

  async getSuggestions(input: string): Promise<SearchHit[]> {
    const { mode, query } = parseSearchInput(input, this.mode);
    const token = ++this.token;
    if (query === "") return [];
    await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS));
    if (token !== this.token) return this.last; // a newer keystroke will render its own results
    try {
      const hits = asSearch(await this.rpc.call("search", { query, mode, limit: this.maxResults })).results;
      this.lastError = "";
      if (token === this.token) this.last = hits;
      return hits;
    } catch (e) {
      this.lastError = errorText(e);
      this.emptyStateText = `Search failed: ${this.lastError}`;
      return [];
    }
  }

  renderSuggestion(hit: SearchHit, el: HTMLElement): void {
    el.addClass("sidecar-hit");
    const top = el.createDiv({ cls: "sidecar-hit-title" });
    top.createSpan({ text: displayName(hit.path) });
    const newest = hit.current ?? hit.supersededBy[0] ?? null;
    if (newest !== null) top.createSpan({ cls: "sidecar-badge", text: `superseded → ${displayName(newest)}` });
    else if (hit.status !== null) top.createSpan({ cls: "sidecar-badge", text: hit.status });
    el.createDiv({ cls: "sidecar-hit-heading", text: `${hit.heading || hit.path} · line ${hit.startLine}` });
    el.createDiv({ cls: "sidecar-hit-snippet", text: hit.snippet });
  }

  onChooseSuggestion(hit: SearchHit, evt: MouseEvent | KeyboardEvent): void {
    void openAt(this.app, hit.path, hit.startLine, evt.ctrlKey || evt.metaKey);
  }
}
