/**
 * The page tests/test_obsidian_render.py opens in headless Chromium: the plugin's RelationsView
 * on the Obsidian shim, its RPC sent to the page's host, which forwards each call to the real
 * daemon's socket (synchronous requests, so the pane is drawn before the page finishes loading).
 */
import { makeApp, setApp } from "./obsidian";
import { buildTaxonomy } from "../../src/model/relations";
import { DEFAULT_PANE_OPTIONS } from "../../src/pane-controller";
import { RelationsView } from "../../src/views/relations-view";

function post(path: string, body: unknown): string {
  const xhr = new XMLHttpRequest();
  xhr.open("POST", path, false);
  xhr.send(JSON.stringify(body));
  return xhr.responseText;
}

const active = new URLSearchParams(location.search).get("note") ?? "";
const client = {
  state: "connected",
  call: async (method: string, params: unknown): Promise<unknown> => {
    const answer = JSON.parse(post("/rpc", { method, params })) as { result?: unknown; error?: { code: number; message: string } };
    if (answer.error !== undefined) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
    return answer.result;
  },
  on: () => () => undefined,
};
setApp(makeApp({ active, read: (path) => post("/read", { path }) }));
const settings = { showUnlinked: true, showRelated: true, relatedLimit: 8 };
const plugin = {
  client,
  settings,
  dueReminders: [],
  taxonomy: () => buildTaxonomy(),
  paneOptions: () => ({ ...DEFAULT_PANE_OPTIONS, debounceMs: 0 }),
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const view = new RelationsView({} as any, plugin as any);
document.getElementById("sidebar")?.appendChild(view.containerEl);
void view.onOpen().then(() => document.body.setAttribute("data-drawn", "yes"));
