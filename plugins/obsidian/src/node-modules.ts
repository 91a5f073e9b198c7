/**
 * Node built-ins, loaded on first use with CommonJS `require`: that is what Obsidian's desktop
 * app gives plugins (a dynamic `import()` there would be resolved as a URL by Electron's
 * renderer), and loading lazily keeps the plugin importable where Node is absent.
 */
type Net = typeof import("net");
type Fs = typeof import("fs");
type Os = typeof import("os");
type Crypto = typeof import("crypto");
type ChildProcess = typeof import("child_process");

export const loadNet = (): Net => require("net") as Net;
export const loadFs = (): Fs => require("fs") as Fs;
export const loadOs = (): Os => require("os") as Os;
export const loadCrypto = (): Crypto => require("crypto") as Crypto;
export const loadChildProcess = (): ChildProcess => require("child_process") as ChildProcess;
