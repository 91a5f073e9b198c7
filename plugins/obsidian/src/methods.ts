/**
 * The methods the plugin may call: exactly the daemon's registry, generated into
 * `generated/methods.ts` by `python -m sidecar.api.typegen`. A method renamed or a parameter
 * changed in Python fails `npm run build` here. Results are checked at run time (results.ts).
 */
import type { Methods } from "./generated/methods";

export type KnownMethods = Methods;
export type KnownMethod = keyof KnownMethods;
