/**
 * The Node side of socket discovery: environment, file system and the `sidecar` CLI. Every
 * Node module is imported on first use, so loading the plugin costs nothing until it connects.
 */
import {
  findSocket,
  parseWhere,
  readVaultConfig,
  socketCandidates,
  type Host,
  type VaultConfig,
} from "./discovery";
import { loadChildProcess, loadCrypto, loadFs, loadOs } from "./node-modules";

export function nodeHost(): Host {
  const crypto = loadCrypto();
  const os = loadOs();
  return {
    env: process.env,
    home: os.homedir(),
    uid: typeof process.getuid === "function" ? process.getuid() : 0,
    sha1: (text) => crypto.createHash("sha1").update(text, "utf8").digest("hex"),
  };
}

async function isSocket(path: string): Promise<boolean> {
  const fs = loadFs();
  try {
    return (await fs.promises.stat(path)).isSocket();
  } catch {
    return false;
  }
}

async function readConfig(vaultPath: string): Promise<VaultConfig | undefined> {
  const fs = loadFs();
  try {
    return readVaultConfig(await fs.promises.readFile(`${vaultPath}/.sidecar/config.toml`, "utf8"));
  } catch {
    return undefined;
  }
}

/** The vault path as the daemon sees it: absolute, symlinks resolved (Python's `resolve()`). */
export async function realVaultPath(path: string): Promise<string> {
  const fs = loadFs();
  try {
    return await fs.promises.realpath(path);
  } catch {
    return path;
  }
}

/** Ask the daemon's CLI: `sidecar where --json --vault PATH`. */
export async function whereViaCli(sidecarPath: string, vaultPath: string): Promise<string | null> {
  const { execFile } = loadChildProcess();
  return new Promise((resolve) => {
    execFile(
      sidecarPath,
      ["where", "--json", "--vault", vaultPath],
      { timeout: 15_000 },
      (err, stdout) => resolve(err ? null : parseWhere(String(stdout))),
    );
  });
}

export interface DiscoverySettings {
  /** An explicit socket path; skips discovery when set. */
  socketPath: string;
  /** The `sidecar` executable, asked with `where --json` when no candidate exists. */
  sidecarPath: string;
}

/** Where to connect for `vaultPath`, following the settings, then the daemon's own rules. */
export async function resolveSocket(s: DiscoverySettings, vaultPath: string): Promise<string | null> {
  if (s.socketPath.trim() !== "") return s.socketPath.trim();
  const vault = await realVaultPath(vaultPath);
  const candidates = socketCandidates(vault, nodeHost(), await readConfig(vault));
  const probe = { isSocket };
  for (const path of candidates) if (await probe.isSocket(path)) return path;
  if (s.sidecarPath.trim() !== "") {
    const asked = await whereViaCli(s.sidecarPath.trim(), vault);
    if (asked !== null) return asked;
  }
  return findSocket(candidates, probe);
}
