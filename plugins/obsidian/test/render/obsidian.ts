/**
 * A shim of the few Obsidian classes RelationsView uses, for rendering the real view in a
 * browser (tests/test_obsidian_render.py): Obsidian's DOM helpers on HTMLElement, ItemView,
 * Notice, TFile and an App whose vault answers from the page's host. Nothing here decides what
 * the pane shows; the view, its controller and its model are the plugin's own code.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */

type ElInfo = { cls?: string; text?: string; attr?: Record<string, string> };

declare global {
  interface HTMLElement {
    createEl<K extends keyof HTMLElementTagNameMap>(tag: K, info?: ElInfo): HTMLElementTagNameMap[K];
    createDiv(info?: ElInfo): HTMLDivElement;
    createSpan(info?: ElInfo): HTMLSpanElement;
    empty(): void;
    addClass(cls: string): void;
    setText(text: string): void;
    appendText(text: string): void;
  }
}

function createEl(this: HTMLElement, tag: string, info: ElInfo = {}): HTMLElement {
  const el = document.createElement(tag);
  if (info.cls !== undefined) el.className = info.cls;
  if (info.text !== undefined) el.textContent = info.text;
  for (const [k, v] of Object.entries(info.attr ?? {})) el.setAttribute(k, v);
  this.appendChild(el);
  return el;
}

const proto = HTMLElement.prototype as any;
proto.createEl = createEl;
proto.createDiv = function (this: HTMLElement, info?: ElInfo) {
  return createEl.call(this, "div", info);
};
proto.createSpan = function (this: HTMLElement, info?: ElInfo) {
  return createEl.call(this, "span", info);
};
proto.empty = function (this: HTMLElement) {
  this.replaceChildren();
};
proto.addClass = function (this: HTMLElement, cls: string) {
  this.classList.add(cls);
};
proto.setText = function (this: HTMLElement, text: string) {
  this.textContent = text;
};
proto.appendText = function (this: HTMLElement, text: string) {
  this.appendChild(document.createTextNode(text));
};

export class TFile {
  extension: string;
  basename: string;
  constructor(public path: string) {
    this.extension = path.split(".").pop() ?? "";
    this.basename = (path.split("/").pop() ?? path).replace(/\.md$/, "");
  }
}

export interface ShimHost {
  active: string;
  read(path: string): string;
}

export function makeApp(host: ShimHost): any {
  return {
    workspace: {
      on: () => ({}),
      trigger: () => undefined,
      getActiveFile: () => new TFile(host.active),
      openLinkText: async () => undefined,
    },
    vault: {
      getAbstractFileByPath: (path: string) => new TFile(path),
      cachedRead: async (file: TFile) => host.read(file.path),
      process: async () => undefined,
    },
    metadataCache: { getFileCache: () => ({ frontmatter: {} }) },
    fileManager: { generateMarkdownLink: (f: TFile) => `[[${f.basename}]]` },
  };
}

export let currentApp: any = null;

export function setApp(app: any): void {
  currentApp = app;
}

export class Component {
  registerEvent(): void {}
}

export class ItemView extends Component {
  app: any;
  containerEl: HTMLElement;
  contentEl: HTMLElement;
  constructor(public leaf: unknown) {
    super();
    this.app = currentApp;
    this.containerEl = document.createElement("div");
    this.containerEl.className = "workspace-leaf-content";
    this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
  }
  getIcon(): string {
    return "";
  }
  async onOpen(): Promise<void> {}
  async onClose(): Promise<void> {}
}

export class Notice {
  constructor(public message: string) {}
}

export type WorkspaceLeaf = unknown;
export type App = any;
