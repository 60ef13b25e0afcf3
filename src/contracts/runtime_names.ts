/**
 * The names `agent.runtime` takes, besides `none`: the one list the settings schema
 * (src/config/schema.ts) accepts and the runner's registries (src/runner/runtimes/registry.ts,
 * facts.ts) are keyed by, so a name without a runtime, or a runtime config refuses, is a type
 * error. Here, below config, because the schema cannot import the runner; what each runtime is
 * lives in its folder, src/runner/runtimes/<name>/.
 *
 * @module
 */

/** Every agent runtime this version has. */
export const RUNTIME_NAMES = ["claude", "codex", "acp"] as const;

/** One of {@linkcode RUNTIME_NAMES}. */
export type RuntimeName = typeof RUNTIME_NAMES[number];
