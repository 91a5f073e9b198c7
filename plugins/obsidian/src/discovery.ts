/**
 * Where the daemon for a vault listens, computed exactly as the daemon computes it
 * (sidecar/config.py `Settings.vault_id`, sidecar/transports/unix_path.py
 * `default_socket_path`):
 *
 *   vault-id = <vault folder name, first 24 characters> "-" <sha1(absolute vault path)[:10]>
 *   1. $XDG_RUNTIME_DIR/sidecar/<vault-id>.sock
 *   2. <data dir>/sock/s        data dir: $SIDECAR_DATA_DIR, index.data_dir,
 *                               $XDG_DATA_HOME/sidecar/<vault-id>, ~/.local/share/sidecar/<vault-id>
 *   3. /tmp/sidecar-<uid>/<vault-id>.sock
 *
 * The daemon takes the first path shorter than 100 bytes; `daemon.socket_path` in
 * `<vault>/.sidecar/config.toml` overrides all. The plugin may not see the daemon's environment
 * (a Flatpak sandbox, a launcher without XDG_RUNTIME_DIR), so it tries every candidate and takes
 * the first that exists. The pure part is here; file-system and process access are injected.
 */

export interface Env {
  readonly [name: string]: string | undefined;
}

export interface Host {
  env: Env;
  home: string;
  uid: number;
  sha1(text: string): string;
}

const MAX_DEFAULT_BYTES = 100;

export function vaultId(vaultPath: string, sha1: (text: string) => string): string {
  const trimmed = vaultPath.length > 1 ? vaultPath.replace(/\/+$/, "") : vaultPath;
  const name = trimmed.split("/").pop() ?? "";
  const short = Array.from(name).slice(0, 24).join("");
  return `${short || "vault"}-${sha1(trimmed).slice(0, 10)}`;
}

export interface VaultConfig {
  socketPath: string;
  dataDir: string;
}

/**
 * The two keys of `.sidecar/config.toml` that move the socket: `[daemon] socket_path` and
 * `[index] data_dir`. A line-based read of basic strings is enough for these two keys.
 */
export function readVaultConfig(toml: string): VaultConfig {
  const out: VaultConfig = { socketPath: "", dataDir: "" };
  let section = "";
  for (const raw of toml.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header !== null) {
      section = (header[1] ?? "").trim();
      continue;
    }
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/.exec(line);
    if (kv === null) continue;
    const value = kv[2] !== undefined ? unescapeBasic(kv[2]) : (kv[3] ?? "");
    if (section === "daemon" && kv[1] === "socket_path") out.socketPath = value;
    if (section === "index" && kv[1] === "data_dir") out.dataDir = value;
  }
  return out;
}

function unescapeBasic(s: string): string {
  return s.replace(/\\(["\\nt])/g, (_m, c: string) => ({ n: "\n", t: "\t" })[c] ?? c);
}

function expandUser(path: string, home: string): string {
  return path === "~" || path.startsWith("~/") ? home + path.slice(1) : path;
}

function join(...parts: string[]): string {
  return parts.join("/").replace(/\/{2,}/g, "/");
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** Every place the daemon may listen, most likely first. */
export function socketCandidates(vaultPath: string, host: Host, config?: VaultConfig): string[] {
  const id = vaultId(vaultPath, host.sha1);
  const env = host.env;
  const out: string[] = [];
  if (env["SIDECAR_DAEMON_SOCKET_PATH"]) out.push(expandUser(env["SIDECAR_DAEMON_SOCKET_PATH"], host.home));
  if (config !== undefined && config.socketPath !== "") {
    out.push(expandUser(config.socketPath, host.home));
  }
  const defaults: string[] = [];
  if (env["XDG_RUNTIME_DIR"]) defaults.push(join(env["XDG_RUNTIME_DIR"], "sidecar", `${id}.sock`));
  const dataBase = env["XDG_DATA_HOME"] || join(host.home, ".local", "share");
  const dataDirs = [
    env["SIDECAR_DATA_DIR"] ?? "",
    env["SIDECAR_INDEX_DATA_DIR"] ?? "",
    config?.dataDir ? expandUser(config.dataDir, host.home) : "",
    join(dataBase, "sidecar", id),
  ].filter((d) => d !== "");
  for (const dir of dataDirs) defaults.push(join(dir, "sock", "s"));
  defaults.push(join("/tmp", `sidecar-${host.uid}`, `${id}.sock`));
  // the daemon skips paths of 100 bytes or more; keep its order among the rest
  out.push(...defaults.filter((p) => byteLength(p) < MAX_DEFAULT_BYTES));
  return [...new Set(out)];
}

export interface FileProbe {
  isSocket(path: string): Promise<boolean>;
}

/** The first candidate that exists as a socket, else the first candidate (to keep retrying). */
export async function findSocket(candidates: readonly string[], probe: FileProbe): Promise<string | null> {
  for (const path of candidates) {
    if (await probe.isSocket(path)) return path;
  }
  return candidates[0] ?? null;
}

/** Parse `sidecar where --json`: `{socket, serving, vault, data_dir}`. */
export function parseWhere(stdout: string): string | null {
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (typeof parsed === "object" && parsed !== null && "socket" in parsed) {
      const socket = (parsed as { socket: unknown }).socket;
      return typeof socket === "string" && socket !== "" ? socket : null;
    }
  } catch {
    return null;
  }
  return null;
}
