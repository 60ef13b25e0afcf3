/**
 * "Allow always" from a permission card (issue 29, item 8): the rule a person
 * confirmed on the dashboard's confirmation page is added to `[policy] allow`
 * in config.toml, the way `wats config set policy.allow` writes it (the whole
 * new file must load, or nothing is written). `policy.allow` is a safety
 * setting: `wats status` and the overview flag the change until the person
 * runs `wats config ack` in a terminal, like any other change; the running
 * daemon's policy is the one it started with, so the rule applies from its
 * next start. `wats ui` writes it, the person's own command (the daemon
 * never writes config.toml: the agent's daemon cannot loosen what holds the
 * agent), and only from the dashboard's confirmation form (a session's POST
 * with its CSRF token and Origin): no agent has a tool or a socket that
 * reaches it (docs/decisions/review_binds.md).
 *
 * Requires read and write of config.toml.
 *
 * @module
 */

import { readConfigText, writeConfigText } from "../config/config_file.ts";
import { setKey } from "../config/edit.ts";
import { resolveSettings } from "../config/settings.ts";
import { InvalidValue, textToToml } from "../config/codecs.ts";
import { SCHEMA } from "../config/schema.ts";
import { ConfigError, WatsError } from "../errors.ts";

/**
 * The rule a card proposes for a request: `HARNESS/execute(COMMAND)` for a
 * command, `HARNESS/KIND(PATH)` for one location, `HARNESS/KIND` otherwise. Pure.
 */
export function proposedRule(
  p: { harness: string; kind: string; locations: readonly string[]; command?: string },
): string {
  const at = p.kind === "execute" ? p.command : p.locations.length === 1 ? p.locations[0] : "";
  const inner = (at ?? "").replace(/[()\n\r]/g, " ").replace(/\s+/g, " ").trim();
  return inner === "" ? `${p.harness}/${p.kind}` : `${p.harness}/${p.kind}(${inner})`;
}

/**
 * Adds `rule` to `policy.allow` in the config file at `path`; says what
 * changed and that it is a safety change. Throws `WatsError` when the rule is
 * not one, or the file would not load.
 */
export async function addAllowRule(
  path: string,
  rule: string,
  env: { HOME?: string; user: string },
): Promise<string> {
  const r = rule.trim();
  let checked: string[];
  try {
    checked = textToToml(SCHEMA["policy.allow"], r, env.HOME) as string[];
    if (checked.length !== 1) throw new InvalidValue("one rule, with no comma");
  } catch (err) {
    if (!(err instanceof InvalidValue)) throw err;
    throw new WatsError(
      "config.bad_value",
      `nothing was written: "${r}" is not a policy rule; ${err.requirement}`,
    );
  }
  const before = (await readConfigText(path)) ?? "";
  const load = (text: string) =>
    resolveSettings({
      fileText: text,
      filePath: path,
      env: env.HOME ? { HOME: env.HOME } : {},
      flags: {},
      user: env.user,
    });
  const now = load(before).fileValues["policy.allow"] ?? [];
  if (now.includes(checked[0]!)) {
    return `nothing was written: policy.allow already holds ${checked[0]} in ${path}`;
  }
  const after = setKey(before, "policy.allow", [...now, ...checked], path);
  try {
    load(after);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new WatsError("config.bad_value", `nothing was written: ${err.message}`);
  }
  await writeConfigText(path, after);
  return `added ${checked[0]} to policy.allow in ${path}: a safety change, flagged until you ` +
    "run `wats config ack` in a terminal; it applies from the daemon's next start (restart " +
    "`wats`); this request itself still waits for your approve or reject";
}
