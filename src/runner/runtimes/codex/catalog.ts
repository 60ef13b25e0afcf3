/**
 * The model catalog that takes code mode away from every Codex model (docs/codex.md, "The lock";
 * docs/harness_facts.md, "Codex code mode and the model catalog").
 *
 * Codex's catalog entry for a model decides its tools: 13 of the 14 bundled models run in
 * `code_mode_only` (a JavaScript `exec` tool, sub-agents), and that wins over `--disable`. A
 * catalog of our own, passed with `-c model_catalog_json=<file>`, wins over the bundled one:
 * made from `codex debug models --bundled` with the code-mode, sub-agent, responses-lite, patch
 * and search fields taken out of every entry, every slug (and no `-m`) gets the plain tools, so
 * the model sees only the wats tools. The file also stops Codex from fetching `/models`, which
 * otherwise decides the tool mode at run time.
 *
 * The daemon makes the file once per Codex program and version, in `<data>/agent/codex/` (the
 * daemon may write `agent/`; the run directory stays empty), and reuses it after.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { HarnessError } from "../../../errors.ts";
import type { CommandRunner } from "../../spawn.ts";

type Json = Record<string, unknown>;

/** Catalog fields deleted from every entry: they switch code mode and sub-agents on. */
export const DELETED_FIELDS: readonly string[] = [
  "tool_mode",
  "multi_agent_version",
  "multi_agent_reasoning_effort",
];

/** Catalog fields set in every entry: no responses-lite, no extra tools, no patch, no search. */
export const FORCED_FIELDS: Readonly<Json> = {
  use_responses_lite: false,
  experimental_supported_tools: [],
  apply_patch_tool_type: null,
  supports_search_tool: false,
};

/** The installed Codex a catalog belongs to. */
export interface CodexInstall {
  /** The program as the runner starts it (`codex`, or a path). */
  program: string;
  /** What `<program> --version` printed, e.g. `codex-cli 0.171.0`. */
  version: string;
  /** A short hash of program and version: the cache key. */
  key: string;
}

/** A catalog ready for `-c model_catalog_json=…`. */
export interface CodexCatalog {
  install: CodexInstall;
  /** The file's absolute path. */
  path: string;
  /** The slugs it holds. */
  slugs: string[];
  /** False when an earlier start made the file. */
  created: boolean;
}

/**
 * The locked catalog made from `codex debug models --bundled` output.
 *
 * @throws {HarnessError} code `harness.codex_catalog` when `bundled` is not `{models: [...]}`
 *   with at least one entry (Codex refuses an empty catalog).
 */
export function lockCatalog(bundled: unknown): { models: Json[] } {
  const models = (bundled as { models?: unknown } | null)?.models;
  if (!Array.isArray(models) || models.length === 0) {
    throw new HarnessError(
      "harness.codex_catalog",
      '`codex debug models --bundled` did not print a catalog ({"models": [...]} with at least ' +
        "one model)",
    );
  }
  return {
    models: models.map((m, i) => {
      if (typeof m !== "object" || m === null || Array.isArray(m)) {
        throw new HarnessError(
          "harness.codex_catalog",
          `entry ${i} of \`codex debug models --bundled\` is not an object`,
        );
      }
      const out: Json = { ...m as Json };
      for (const f of DELETED_FIELDS) delete out[f];
      return { ...out, ...structuredClone(FORCED_FIELDS) };
    }),
  };
}

/**
 * Asks `program --version`.
 *
 * @throws {HarnessError} code `harness.codex_catalog` when it fails or prints nothing.
 */
export async function codexInstall(run: CommandRunner, program: string): Promise<CodexInstall> {
  const out = await run(program, ["--version"]);
  const version = out.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (out.code !== 0 || version === "") {
    throw new HarnessError(
      "harness.codex_catalog",
      `\`${program} --version\` ${failure(out)}; install Codex (npm install -g @openai/codex)`,
    );
  }
  return { program, version, key: shortHash(`${program}\0${version}`) };
}

/** The first 16 hex digits of the SHA-256 of `s`. */
export function shortHash(s: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(s))).slice(0, 16);
}

/** Where the catalog of `install` lives in `dir` (`<data>/agent/codex`). */
export function catalogPath(dir: string, install: CodexInstall): string {
  return `${dir}/catalog-${install.key}.json`;
}

/**
 * The locked catalog of the installed Codex: reused when this program and version already have
 * one in `dir`, otherwise made from `debug models --bundled` and written (whole or not at all).
 * Requires `--allow-run` for `program`, read and write on `dir`.
 *
 * @throws {HarnessError} code `harness.codex_catalog` with the reason when Codex cannot say its
 *   version or list its bundled models.
 */
export async function ensureCodexCatalog(
  o: { run: CommandRunner; program: string; dir: string },
): Promise<CodexCatalog> {
  const install = await codexInstall(o.run, o.program);
  const path = catalogPath(o.dir, install);
  try {
    const cached = JSON.parse(await Deno.readTextFile(path));
    return { install, path, slugs: slugsOf(cached), created: false };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound) && !(err instanceof SyntaxError)) throw err;
  }
  const out = await o.run(o.program, ["debug", "models", "--bundled"]);
  if (out.code !== 0) {
    throw new HarnessError(
      "harness.codex_catalog",
      `\`${o.program} debug models --bundled\` ${failure(out)}; wats needs it to switch off ` +
        `code mode (install Codex 0.171 or newer: npm install -g @openai/codex)`,
    );
  }
  let bundled: unknown;
  try {
    bundled = JSON.parse(out.stdout);
  } catch {
    throw new HarnessError(
      "harness.codex_catalog",
      `\`${o.program} debug models --bundled\` did not print JSON: ${out.stdout.slice(0, 200)}`,
    );
  }
  const catalog = lockCatalog(bundled);
  await Deno.mkdir(o.dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(catalog));
  await Deno.rename(tmp, path);
  return { install, path, slugs: slugsOf(catalog), created: true };
}

function slugsOf(catalog: unknown): string[] {
  const models = (catalog as { models?: unknown } | null)?.models;
  if (!Array.isArray(models) || models.length === 0) throw new SyntaxError("not a catalog");
  return models.map((m) => String((m as Json).slug));
}

function failure(out: { code: number; stdout: string; stderr: string }): string {
  const tail = (out.stderr || out.stdout).trim().slice(-300);
  return `exited with code ${out.code}${tail ? `: ${tail}` : ""}`;
}
