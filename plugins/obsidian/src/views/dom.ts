/** Small rendering helpers shared by the views: note links that open (and preview) a note. */
import type { App, Component } from "obsidian";
import { editorLine } from "../model/search";

export const HOVER_SOURCE = "vault-sidecar";

/** Open `path` at the daemon's 1-based `line` (0 = frontmatter, i.e. the top). */
export async function openAt(app: App, path: string, line = 0, newLeaf = false): Promise<void> {
  await app.workspace.openLinkText(path, "", newLeaf, {
    active: true,
    eState: line > 0 ? { line: editorLine(line) } : {},
  });
}

export function displayName(path: string): string {
  return (path.split("/").pop() ?? path).replace(/\.md$/i, "");
}

/** A clickable note name: opens on click (Ctrl/Cmd-click: new tab), previews on hover. */
export function noteLink(
  app: App,
  parent: HTMLElement,
  hoverParent: Component,
  path: string,
  opts: { line?: number; label?: string; broken?: boolean; title?: string } = {},
): HTMLElement {
  const el = parent.createEl("a", {
    cls: opts.broken === true ? "internal-link is-unresolved sidecar-link" : "internal-link sidecar-link",
    text: opts.label ?? displayName(path),
    attr: { href: "#", "data-href": path, title: opts.title ?? path },
  });
  if (opts.broken === true) return el;
  el.addEventListener("click", (evt) => {
    evt.preventDefault();
    void openAt(app, path, opts.line ?? 0, evt.ctrlKey || evt.metaKey);
  });
  el.addEventListener("mouseover", (event) => {
    app.workspace.trigger("hover-link", {
      event,
      source: HOVER_SOURCE,
      hoverParent,
      targetEl: el,
      linktext: path,
    });
  });
  return el;
}

/**
 * A collapsible section whose open/closed state survives re-rendering, drawn like Obsidian's own
 * Backlinks pane: its collapse chevron, the title, the count aligned right. `startClosed` closes
 * it until the user opens it (unlinked mentions past a few).
 */
export function section(
  parent: HTMLElement,
  key: string,
  title: string,
  count: number | null,
  collapsed: Set<string>,
  startClosed = false,
): HTMLElement {
  const details = parent.createEl("details", { cls: `sidecar-section sidecar-${key}` });
  if (startClosed && !collapsed.has(`opened:${key}`)) collapsed.add(key);
  details.open = !collapsed.has(key);
  details.addEventListener("toggle", () => {
    if (details.open) {
      collapsed.delete(key);
      collapsed.add(`opened:${key}`);
    } else collapsed.add(key);
  });
  const summary = details.createEl("summary", { cls: "sidecar-section-title tree-item-self is-clickable" });
  summary.createDiv({ cls: "tree-item-icon collapse-icon" }).createSpan({ cls: "sidecar-chevron", text: "›" });
  summary.createSpan({ cls: "tree-item-inner", text: title });
  if (count !== null) summary.createDiv({ cls: "tree-item-flair-outer" }).createSpan({ cls: "tree-item-flair sidecar-count", text: String(count) });
  return details.createDiv({ cls: "sidecar-section-body" });
}
