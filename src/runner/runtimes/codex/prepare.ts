/**
 * `agent.runtime = "codex"` as the daemon starts it (docs/codex.md): the locked catalog and the
 * feature probe at start (either failing refuses the runtime with the reason), the harness built
 * from `agent.codex_model`, `agent.codex_base_url` and `agent.codex_env_key`, and the self-check
 * the daemon runs once its MCP socket serves, before the first run.
 *
 * Every refusal is also written to `<data>/agent/codex/self-check.json`, so `wats status` shows
 * it after the daemon has stopped.
 *
 * @module
 */

import { errorMessage } from "../../../error_message.ts";
import { ConfigError } from "../../../errors.ts";
import type { RunContext } from "../../harness.ts";
import type { CommandRunner, SpawnFn } from "../../spawn.ts";
import {
  codexHarness,
  type CodexHarnessOptions,
  type CodexProvider,
  LOCKED_CONFIG,
} from "./harness.ts";
import { type CodexCatalog, type CodexInstall, ensureCodexCatalog } from "./catalog.ts";
import { codexFeatureProbe, lockdownDisables } from "./features.ts";
import { ensureSelfCheck, recordRefusal, selfCheckKey, type SelfCheckResult } from "./lock.ts";

/** The provider id wats gives `agent.codex_base_url`. */
export const CUSTOM_PROVIDER_ID = "wats_endpoint";

/** The Codex settings of config.toml (empty text: unset). */
export interface CodexSettings {
  "agent.codex_model": string;
  "agent.codex_base_url": string;
  "agent.codex_env_key": string;
}

/** A Codex runtime ready to run: its harness options and the self-check still to pass. */
export interface CodexRuntime {
  options: CodexHarnessOptions;
  install: CodexInstall;
  /** Runs the self-check unless a passed one covers this Codex and model. */
  selfCheck(o: { ctx: RunContext; spawn: SpawnFn }): Promise<SelfCheckOutcome>;
}

/** What {@linkcode CodexRuntime.selfCheck} did. */
export interface SelfCheckOutcome {
  result: SelfCheckResult;
  /** False when a passed check on file was reused. */
  ran: boolean;
}

/** The provider the settings ask for, or none (Codex's default and its login). */
export function providerOf(s: CodexSettings): CodexProvider | undefined {
  const url = s["agent.codex_base_url"], key = s["agent.codex_env_key"];
  if (url === "") {
    if (key !== "") {
      throw new ConfigError(
        "agent.codex_env_key",
        "agent.codex_env_key is set but agent.codex_base_url is not: Codex's own provider reads " +
          "CODEX_API_KEY or its login; set agent.codex_base_url, or unset agent.codex_env_key",
      );
    }
    return undefined;
  }
  return {
    id: CUSTOM_PROVIDER_ID,
    name: "wats endpoint",
    baseUrl: url,
    ...(key !== "" ? { envKey: key } : {}),
  };
}

/**
 * Refuses a start whose `agent.codex_env_key` names a variable the daemon's environment lacks:
 * Codex would fail every run, each one using up a run of the day. Called by the launcher, which
 * holds the environment (workers see only its filtered copy). `dataDir` is for the advice.
 *
 * @throws {ConfigError} code `agent.codex_env_key` naming the variable to set.
 */
export function requireCodexKey(
  s: CodexSettings,
  env: Readonly<Record<string, string>>,
  dataDir: string,
): void {
  const key = s["agent.codex_env_key"];
  if (key === "" || (env[key] ?? "") !== "") return;
  throw new ConfigError(
    "agent.codex_env_key",
    `agent.codex_env_key names ${key}, which is not set: set it where wats starts ` +
      `(export ${key}=…; for wats service, a ${key}=… line in ${dataDir}/service.env), ` +
      "or unset agent.codex_env_key",
  );
}

/**
 * Makes (or reuses) the locked catalog in `dir` and probes the features. Requires `--allow-run`
 * for `program`, read and write on `dir`.
 *
 * @throws {ConfigError} code `agent.runtime` naming the reason when Codex cannot be locked; the
 *   reason is also written to `dir`'s self-check file.
 */
export async function prepareCodexRuntime(o: {
  run: CommandRunner;
  dir: string;
  settings: CodexSettings;
  program?: string;
}): Promise<CodexRuntime> {
  const program = o.program ?? "codex";
  const refuse = async (why: string): Promise<never> => {
    const error = `agent.runtime = "codex" is refused: ${why}`;
    await recordRefusal(o.dir, { program, error });
    throw new ConfigError("agent.runtime", error);
  };
  const provider = providerOf(o.settings);
  let catalog: CodexCatalog, known: string[];
  try {
    catalog = await ensureCodexCatalog({ run: o.run, program, dir: o.dir });
    known = await codexFeatureProbe(o.run)(program);
  } catch (err) {
    return await refuse(errorMessage(err));
  }
  const model = o.settings["agent.codex_model"] || undefined;
  const options: CodexHarnessOptions = {
    program,
    catalog: catalog.path,
    disable: lockdownDisables(known),
    ...(model !== undefined ? { model } : {}),
    ...(provider !== undefined ? { provider } : {}),
  };
  const key = selfCheckKey({
    installKey: catalog.install.key,
    model,
    args: [...options.disable, ...LOCKED_CONFIG, catalog.path],
  });
  return {
    options,
    install: catalog.install,
    selfCheck: async ({ ctx, spawn }) => {
      try {
        return await ensureSelfCheck({
          dir: o.dir,
          key,
          program,
          version: catalog.install.version,
          ...(model !== undefined ? { model } : {}),
          ctx,
          spawn,
          harness: (baseUrl) =>
            codexHarness({
              ...options,
              provider: {
                id: "wats_self_check",
                name: "wats self-check",
                baseUrl,
                requestMaxRetries: 0,
                streamMaxRetries: 0,
              },
            }),
        });
      } catch (err) {
        throw new ConfigError(
          "agent.runtime",
          `agent.runtime = "codex" is refused: ${errorMessage(err)}`,
        );
      }
    },
  };
}
