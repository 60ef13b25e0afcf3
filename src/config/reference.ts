/**
 * Renders docs/configuration.md from the settings schema, so the reference can
 * never drift from what wats accepts (a test compares the two). Regenerate with
 * `deno run -A src/config/reference.ts > docs/configuration.md`.
 *
 * @module
 */

import { formatDuration } from "../duration.ts";
import {
  REMOVED_KEYS,
  removedKeyWarning,
  SCHEMA,
  SETTING_KEYS,
  type SettingSpec,
} from "./schema.ts";

/** The command that regenerates docs/configuration.md. */
export const REGENERATE = "deno run -A src/config/reference.ts > docs/configuration.md";

/** docs/configuration.md, in full (already in `deno fmt`'s layout). */
export function renderReference(): string {
  const rows = SETTING_KEYS.map((key) => {
    const spec = SCHEMA[key] as SettingSpec;
    return [
      code(key),
      spec.type,
      defaultCell(spec),
      allowedCell(spec),
      spec.safety ? "yes" : "",
      code(spec.env),
      spec.flags.map(code).join(", "),
      spec.description,
    ];
  });
  const table = markdownTable(
    ["Key", "Type", "Default", "Allowed", "Safety", "Variable", "Flags", "Description"],
    rows,
  );
  const removed = markdownTable(
    ["Key", "Replaced by", "When config.toml still sets it"],
    Object.keys(REMOVED_KEYS).map((key) => [
      code(key),
      "the loop detector, `agent.loop_max_exchanges`",
      `one warning: "${removedKeyWarning(key)}"`,
    ]),
  );
  return `# Configuration

<!-- Generated from src/config/schema.ts: do not edit by hand. Regenerate with
\`${REGENERATE}\`. -->

wats reads each setting from the first of these that sets it:

1. **flags** of the daemon (\`wats --agent claude --every 1m\`): for that run only; flags never write
   the file;
2. **\`WATS_*\` environment variables** (\`WATS_AGENT_MAX_TURNS=3\`);
3. **\`config.toml\`** in the data directory, edited with \`wats config set|unset\` or by hand;
4. the **defaults** below.

\`wats config list\` shows every setting, its value in effect and where it comes from (flag, env,
file, default); \`wats config get KEY\` prints one value. Unknown keys and bad values are errors that
name the key, the value, the file and line (or the variable or flag) and what is allowed.

## config.toml

Keys are dotted: \`agent.max_turns\` is \`max_turns\` under \`[agent]\`. Top-level dotted keys
(\`agent.max_turns = 5\`) work too. \`wats config set\` and \`unset\` keep your comments, blank lines and
the order of the other keys, and refuse to write a file that would not load.

\`\`\`toml
# <data dir>/config.toml
profile = "alice"
infra = ["wss://relay.example.org"]

[agent]
runtime = "claude"
every = "30s"
max_usd_per_day = 2
allow = ["npub1…"]
\`\`\`

## Coding agents: \`[harnesses.NAME]\` and \`[checkouts.NAME]\`

A harness is a coding agent that speaks ACP over stdio; a checkout is a git repository with at least
one commit that coding agents may work in, each piece of work in its own worktree and branch.
docs/acp.md explains the layer and the \`[policy]\` rules that decide each permission request.

\`\`\`toml
[harnesses.claude]
command = "claude-agent-acp"   # required: a program on PATH or an absolute path
args = []                      # its arguments
env = { ANTHROPIC_API_KEY = "…" }   # added to its environment (IS_SANDBOX is always dropped)
meta = { claudeCode = { options = { model = "claude-sonnet-4-5" } } }   # the session's _meta
context = ["CLAUDE.md", "AGENTS.md"]   # worktree files added to each new session
idle = "10m"                   # stop it after this long with no call attached (default 10m)
enabled = true                 # false: no tool for it
# agent = "claude"            # the agent it runs, when its command is not exactly claude-agent-acp
#                             # or codex-acp (a wrapper, npx): its sandbox gets that agent's login
# An agent wats does not know (not Claude or Codex): its state folder and login (docs/acp.md)
# state = "~/.gemini"          # one folder directly under home
# login = ["oauth_creds.json"] # files of it copied into its sandbox's private home

[checkouts.billing]
path = "/srv/billing"          # required: absolute
base = "origin/main"           # the ref each work's branch is cut from (default HEAD)
fetch = true                   # git fetch before cutting a branch (default false)
merge = "ff"                   # how \`wats work merge\` lands a work: "ff" (default) or "merge"

[policy]
allow = ["claude/edit(src/**)"]
deny = ["claude/delete"]
\`\`\`

A harness or checkout name is lowercase letters, digits, \`-\` and \`_\`, starting with a letter; the
harness name is the name of its MCP tool. An unknown key in these tables, a missing \`command\` or
\`path\`, or a value of the wrong type is an error naming the file and line.

## Notifications: \`[notify.NAME]\`

Targets that hear of what waits for a person (held drafts, parked requests, calls in doubt, budget
pauses, halts, failed runs): a signed JSON webhook, an ntfy topic or a Slack incoming webhook.
docs/notifications.md describes the payloads, the signature and the retries.

\`\`\`toml
[notify.phone]
type = "ntfy"                  # required: webhook, ntfy or slack
url = "https://ntfy.example.org/alice-wats"   # required: http or https
events = ["permission", "halted"]   # default: all of them
token_env = "NTFY_TOKEN"       # ntfy: the variable holding a bearer token
timeout = "10s"                # one attempt, 1s to 60s (default 10s)

[notify.hook]
type = "webhook"
url = "https://hooks.example.org/wats"
secret_env = "HOOK_SECRET"   # webhook, required: the variable holding the HMAC secret

[notify.team]
type = "slack"
url_env = "SLACK_WEBHOOK_URL"  # instead of url: the variable holding a URL that is a secret
\`\`\`

Secrets are never values in config.toml, only variable names: a missing variable turns its target
off with a warning at start. An unknown key, event or type is an error naming the file and line.

## Environment variables

Each setting has a variable: \`WATS_\` and the key in capitals, dots as underscores
(\`agent.max_usd_per_day\` is \`WATS_AGENT_MAX_USD_PER_DAY\`). An empty variable counts as unset.
\`WATS_*\` variables that name no setting are ignored, so a typo does nothing: check with
\`wats config list\`. \`WATS_DATA_DIR\` is not a setting: it chooses the data directory.

## Values

- **duration**: a whole number and a unit, or several: \`0\`, \`500ms\`, \`90s\`, \`10m\`, \`1h\`, \`1h30m\`,
  \`7d\`. In config.toml, a string (\`every = "30s"\`). \`agent.sweep\` also takes \`infinity\` for off
  (\`sweep = "infinity"\`; \`0\` is off too, and \`wats config get\` shows either as \`infinity\`).
- **list**, **relay-list**: an array in config.toml (\`allow = ["npub1…", "…"]\`); comma-separated in
  variables, flags and \`wats config set\` (\`a,b\`), which also take config.toml's spelling
  (\`wats config set agent.caps '["rust", "review"]'\`). Text that starts or ends with a bracket but
  is not an array of double-quoted strings is refused, never kept as an item. An empty value is the
  empty list.
- **author keys** (\`agent.allow\`, \`halt.accept\`): \`npub1…\` or 64 hexadecimal characters; wats uses
  them as lowercase hex.
- **capability names** (\`agent.caps\`; also the caps of an ask in the \`ask\` tool, \`wats try --caps\`
  and the dashboard): 1 to 64 lowercase letters, digits and \`. _ + # -\`, starting with a letter or
  digit (\`rust\`, \`c++\`, \`node.js\`); \`Rust\` and \`cap:rust\` are read as \`rust\`, anything else is
  refused (\`src/cap_name.ts\` is the one validator).
- **budgets**: \`agent.max_usd_per_day\` may not be above \`agent.max_usd_per_month\` (a day could never
  spend it): raise the month first.
- **bool**: \`true\` or \`false\` (variables and flags also take \`1\`/\`0\`, \`yes\`/\`no\`, \`on\`/\`off\`).
- **int**, **number**: bare in config.toml (\`max_turns = 5\`, not \`"5"\`).
- **address**: \`host:port\`, e.g. \`127.0.0.1:7447\`; empty: off.
- **path**: absolute (\`~/\` is expanded); empty: unset.

## Safety settings

Settings marked **safety** hold the agent in check. Their acknowledged values live in
\`<data dir>/safety.json\`; the daemon's first start records them. When one differs, the daemon logs
it at startup and \`wats status\` and the MCP \`status\` tool show it until you run \`wats config ack\`, a
command no agent tool can run. \`wats config set\` on a safety key says so. The same holds for what a
coding agent is and where it works: a harness's \`command\`, \`args\`, \`env\`, \`meta\` and \`enabled\`, a
checkout's \`path\`, and a harness or checkout added or removed; an \`env\` value is never shown, and
safety.json keeps only its hash (docs/acp.md).

There is no live reload: a running daemon keeps the values it started with. Restart it after a
change.

## Settings

${table}

## Removed keys

${removed}

\`wats config set\` refuses these keys; \`wats config unset\` removes them.
`;
}

function code(s: string): string {
  return "`" + s + "`";
}

function defaultCell(spec: SettingSpec): string {
  const d = spec.default;
  const shown = spec.type === "duration"
    ? code(formatDuration(d as number))
    : Array.isArray(d)
    ? code("[]")
    : d === ""
    ? code('""')
    : code(String(d));
  return spec.defaultNote ? `${shown} (${spec.defaultNote})` : shown;
}

function allowedCell(spec: SettingSpec): string {
  switch (spec.type) {
    case "enum":
      return spec.allowed!.map(code).join(", ");
    case "int":
      return `whole number >= ${spec.min ?? 0}`;
    case "number":
      return `>= ${spec.min ?? 0}`;
    case "duration":
      return spec.min
        ? `>= ${formatDuration(spec.min)}`
        : spec.off
        ? `${code(spec.off)} or ${code("0")}: off`
        : "";
    case "list":
      return spec.item === "author-key"
        ? "author keys"
        : spec.item === "rule"
        ? "rules"
        : spec.item === "cap"
        ? "capability names"
        : "names";
    case "relay-list":
      return "`ws://`, `wss://` URLs";
    case "address":
      return "host:port";
    case "path":
      return "absolute path";
    default:
      return "";
  }
}

/** A markdown table laid out as `deno fmt` lays it out, so the file stays fmt-clean. */
function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    "| " + cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ") + " |";
  return [
    line(header),
    "| " + widths.map((w) => "-".repeat(w)).join(" | ") + " |",
    ...rows.map(line),
  ].join("\n");
}

if (import.meta.main) {
  await Deno.stdout.write(new TextEncoder().encode(renderReference()));
}
