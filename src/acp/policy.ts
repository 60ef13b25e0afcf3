/**
 * The wats policy for a coding agent's permission requests (issue 10, item 4).
 * Each `session/request_permission` is judged as a tool call named
 * `<harness>/<kind>` whose resources are the request's `locations` and, for an
 * `execute` request, the command in its `rawInput`:
 *
 * 1. a location inside the data directory, other than the call's own worktree,
 *    is always refused (config.toml, safety.json, node.key, other worktrees),
 *    and so is a `/proc/<pid>/root`-style alias of another path, and any request
 *    but a read-only one that touches a `.git` inside the worktree;
 * 2. a `[policy] deny` rule that matches refuses (deny beats allow); for a
 *    command, a rule that matches any of its parts;
 * 3. a `[policy] allow` rule that matches allows; for a command, every part of
 *    it must match an allow rule (src/acp/shell_split.ts splits it);
 * 4. otherwise the class default: `read_only` (read, search, think, fetch)
 *    allows, `destructive` (delete) refuses, `gated` (the rest) asks — except
 *    that a default never allows a request with a location outside the
 *    worktree, or with no location at all (it asks instead): Claude's Bash asks
 *    with `locations` missing or partial, so only an explicit rule may open the
 *    world outside the worktree.
 *
 * Pure: paths arrive already resolved (see {@linkcode resolveLocation}).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { type CommandPart, partText, splitCommand } from "./shell_split.ts";

/** The three classes of ACP tool kinds. */
export type KindClass = "read_only" | "destructive" | "gated";

/** What the policy says. `ask` waits for a person, or refuses when review is off. */
export type Verdict = "allow" | "deny" | "ask";

/** The class of an ACP tool kind. */
export function kindClass(kind: string): KindClass {
  if (["read", "search", "think", "fetch"].includes(kind)) return "read_only";
  if (kind === "delete") return "destructive";
  return "gated";
}

/**
 * One parsed rule: `HARNESS/KIND` with an optional pattern in parentheses. For
 * an `execute` request the pattern is matched against the command's parts, for
 * any other kind against the request's locations; a rule without one matches
 * every request of its harness and kind.
 */
export interface Rule {
  text: string;
  harness: string;
  kind: string;
  /** The pattern as a path glob. */
  glob?: RegExp;
  /** True when the glob is absolute: it matches absolute paths; else paths inside the worktree. */
  absolute?: boolean;
  /** The pattern as a command glob. */
  command?: RegExp;
}

/** The policy of one node: its rules and the paths it protects. */
export interface Policy {
  allow: Rule[];
  deny: Rule[];
  /** The data directory, resolved: never reachable through a request. */
  dataDir: string;
  /** The user's home, for `~` in locations and rules. */
  home?: string;
  /** The file system compares names without case (macOS, Windows): so do the checks. */
  foldCase: boolean;
}

/** What else a policy needs to know of the machine. */
export interface PolicyOptions {
  home?: string;
  /** Undefined: probed on the data directory ({@linkcode foldsCase}). */
  foldCase?: boolean;
}

/** A request to judge. */
export interface PermissionAsk {
  harness: string;
  /** The ACP tool kind; `other` when the agent gave none. */
  kind: string;
  /** The request's locations, absolute and resolved. */
  locations: string[];
  /** The call's worktree, absolute and resolved. */
  worktree: string;
  /** An `execute` request's command (src/acp/shell_split.ts `commandOf`), when it has one. */
  command?: string;
}

/** The policy's answer and why, in words for `refused` and the logs. */
export interface Decision {
  verdict: Verdict;
  reason: string;
}

/** Parses `policy.allow` / `policy.deny` (the schema already checked their shape). */
export function parseRules(texts: readonly string[], opts: PolicyOptions = {}): Rule[] {
  return texts.map((text) => {
    const m = /^([^/]+)\/([^(]+)(?:\((.*)\))?$/.exec(text);
    if (!m) throw new Error(`not a policy rule: ${text}`);
    const rule: Rule = { text, harness: m[1]!, kind: m[2]! };
    if (m[3] === undefined) return rule;
    const path = expandHome(m[3], opts.home);
    const flags = opts.foldCase ? "i" : "";
    return {
      ...rule,
      glob: globRe(path, flags),
      absolute: path.startsWith("/"),
      command: commandRe(m[3]),
    };
  });
}

/** Builds the policy from the settings. */
export function makePolicy(
  allow: readonly string[],
  deny: readonly string[],
  dataDir: string,
  opts: PolicyOptions = {},
): Policy {
  const o = { ...opts, foldCase: opts.foldCase ?? foldsCase(dataDir) };
  return {
    allow: parseRules(allow, o),
    deny: parseRules(deny, o),
    dataDir,
    home: o.home,
    foldCase: o.foldCase,
  };
}

/**
 * A path glob: `*` is any run of characters but `/`, `**` any run including
 * `/`, `?` one character. A relative glob matches paths relative to the
 * worktree, and only those; an absolute one matches absolute paths.
 */
export function globRe(glob: string, flags = ""): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
      // `src/**/x` also matches `src/x`.
      if (glob[i + 1] === "/") {
        i++;
        re = re.slice(0, -2) + "(?:.*/)?";
      }
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`, flags);
}

/**
 * A command glob, matched against one part of a command (its words joined by
 * single spaces): `*` is any run of characters, `?` one; a pattern ending in
 * ` *` also matches the command without arguments (`git commit *` matches
 * `git commit`).
 */
export function commandRe(pattern: string): RegExp {
  const words = pattern.trim().split(/\s+/);
  const bare = words.length > 1 && words[words.length - 1] === "*";
  const head = bare ? words.slice(0, -1) : words;
  const re = head.join(" ").split("").map((c) => c === "*" ? ".*" : c === "?" ? "." : escapeRe(c))
    .join("");
  return new RegExp(`^${re}${bare ? "(?: .*)?" : ""}$`, "s");
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function expandHome(path: string, home: string | undefined): string {
  if (home === undefined) return path;
  if (path === "~") return home;
  return path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
}

/**
 * True when the file system holding `dir` finds a name whatever its case: the
 * same directory is reached with its letters' case swapped.
 *
 * Requires `--allow-read` on `dir` (without it: false).
 */
export function foldsCase(dir: string): boolean {
  const swapped = dir.replace(
    /[a-zA-Z]/g,
    (c) => c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase(),
  );
  if (swapped === dir) return false;
  try {
    const a = Deno.statSync(dir);
    const b = Deno.statSync(swapped);
    return a.ino !== null && a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/** True when `inner` is `outer` or lies inside it, case folded where the file system folds it. */
function within(policy: Policy, inner: string, outer: string): boolean {
  const a = policy.foldCase ? inner.toLowerCase() : inner;
  const b = policy.foldCase ? outer.toLowerCase() : outer;
  return a === b || a.startsWith(b.endsWith("/") ? b : b + "/");
}

/**
 * `/proc/<pid>/root`, `cwd`, `fd`, `map_files`, `exe` and `/dev/fd` reach other
 * paths through the kernel, not through links the policy could resolve.
 */
const PROC_ALIAS =
  /^\/(?:proc\/[^/]+(?:\/task\/[^/]+)?\/(?:root|cwd|fd|fdinfo|map_files|exe)|dev\/fd)(?:\/|$)/;

function ruleApplies(rule: Rule, ask: PermissionAsk): boolean {
  return (rule.harness === "*" || rule.harness === ask.harness) &&
    (rule.kind === "*" || rule.kind === ask.kind);
}

/** Does a path rule match the request's locations (all of them for allow, one for deny)? */
function matchesLocations(policy: Policy, rule: Rule, ask: PermissionAsk, every: boolean) {
  if (rule.glob === undefined) return true;
  if (ask.locations.length === 0) return false;
  const test = (l: string) => {
    if (rule.absolute) return rule.glob!.test(l);
    if (!within(policy, l, ask.worktree)) return false;
    return rule.glob!.test(
      l.length === ask.worktree.length ? "." : l.slice(ask.worktree.length + 1),
    );
  };
  return every ? ask.locations.every(test) : ask.locations.some(test);
}

/** The parts of an execute request's command; null when it has none or it cannot be split. */
function partsOf(ask: PermissionAsk): CommandPart[] | null {
  return ask.command === undefined ? null : splitCommand(ask.command);
}

function denyRule(policy: Policy, ask: PermissionAsk): { rule: Rule; what?: string } | undefined {
  const execute = ask.kind === "execute";
  const parts = execute ? partsOf(ask) : null;
  for (const rule of policy.deny) {
    if (!ruleApplies(rule, ask)) continue;
    if (rule.glob === undefined) return { rule };
    if (!execute || rule.kind === "*") {
      // A path pattern refuses on any location, an execute request's too: refusing is never a hole.
      if (matchesLocations(policy, rule, ask, false)) return { rule };
      continue;
    }
    // A command is denied when any part matches, or, to be safe, its whole text.
    const texts = [...(parts ?? []).map(partText), ...(ask.command ? [ask.command] : [])];
    const hit = texts.find((t) => rule.command!.test(t));
    if (hit !== undefined) return { rule, what: hit };
  }
  return undefined;
}

function allowRules(policy: Policy, ask: PermissionAsk): Rule[] | undefined {
  // An execute request's locations are partial or missing: only `execute` rules judge its command.
  const rules = policy.allow.filter((r) =>
    ruleApplies(r, ask) && !(ask.kind === "execute" && r.kind === "*" && r.glob !== undefined)
  );
  const open = rules.find((r) => r.glob === undefined);
  if (open) return [open];
  if (ask.kind !== "execute") {
    const r = rules.find((r) => matchesLocations(policy, r, ask, true));
    return r ? [r] : undefined;
  }
  // Every part of the command needs a rule; a command that cannot be split has none.
  const parts = partsOf(ask);
  if (parts === null || parts.length === 0) return undefined;
  const used: Rule[] = [];
  for (const part of parts) {
    const r = rules.find((r) => r.command!.test(partText(part)));
    if (r === undefined) return undefined;
    if (!used.includes(r)) used.push(r);
  }
  return used;
}

/** Judges one permission request. */
export function decide(policy: Policy, ask: PermissionAsk): Decision {
  const name = `${ask.harness}/${ask.kind}`;
  const alias = ask.locations.find((l) => PROC_ALIAS.test(l));
  if (alias !== undefined) {
    return {
      verdict: "deny",
      reason: `${name} touches ${alias}, a kernel alias that can reach any path`,
    };
  }
  const protectedHit = ask.locations.find((l) =>
    within(policy, l, policy.dataDir) && !within(policy, l, ask.worktree)
  );
  if (protectedHit !== undefined) {
    return {
      verdict: "deny",
      reason: `${name} touches ${protectedHit}, inside the wats data directory`,
    };
  }
  // The worktree's `.git` names the git dir the daemon's own git commands use.
  const gitMeta = kindClass(ask.kind) === "read_only"
    ? undefined
    : ask.locations.find((l) =>
      within(policy, l, ask.worktree) &&
      l.slice(ask.worktree.length + 1).split("/").some((p) =>
        (policy.foldCase ? p.toLowerCase() : p) === ".git"
      )
    );
  if (gitMeta !== undefined) {
    return { verdict: "deny", reason: `${name} touches ${gitMeta}, the worktree's git metadata` };
  }
  const deny = denyRule(policy, ask);
  if (deny) {
    const what = deny.what === undefined ? "" : ` (${deny.what})`;
    return { verdict: "deny", reason: `${name} is denied by the rule ${deny.rule.text}${what}` };
  }
  const allow = allowRules(policy, ask);
  if (allow) {
    const texts = allow.map((r) => r.text).join(", ");
    return {
      verdict: "allow",
      reason: `${name} is allowed by the rule${allow.length > 1 ? "s" : ""} ${texts}`,
    };
  }

  const cls = kindClass(ask.kind);
  if (cls === "destructive") {
    return { verdict: "deny", reason: `${name} is destructive and no rule allows it` };
  }
  if (cls === "gated") {
    return { verdict: "ask", reason: `${name} is gated: it needs a rule or a person's approval` };
  }
  const outside = ask.locations.find((l) => !within(policy, l, ask.worktree));
  if (outside !== undefined) {
    return {
      verdict: "ask",
      reason: `${name} reaches ${outside}, outside the worktree, and no rule allows it`,
    };
  }
  if (ask.locations.length === 0) {
    return {
      verdict: "ask",
      reason: `${name} names no location, so it may reach outside the worktree`,
    };
  }
  return { verdict: "allow", reason: `${name} is read-only inside the worktree` };
}

/**
 * Resolves a request's location to an absolute path the way the kernel walks
 * it: `~` and `file://` expanded, then component by component, each symlink
 * followed before the next `..` applies (so `link/../node.key` is judged where
 * the link points, not beside it), as far as the path exists; the rest is
 * normalised.
 *
 * Requires `--allow-read` on the path's existing ancestors (else the path is
 * only normalised from there on).
 */
export function resolveLocation(path: string, cwd: string, home?: string): string {
  let p = path;
  if (p.startsWith("file://")) {
    try {
      p = fileURLToPath(p);
    } catch {
      // Not a local file URL: judged as written.
    }
  }
  p = expandHome(p, home);
  const parts = (p.startsWith("/") ? p : `${cwd}/${p}`).split("/");
  let current = "/";
  let physical = true;
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = current === "/" ? "/" : current.slice(0, current.lastIndexOf("/")) || "/";
      // The parent was reached as it really is: links below it can be followed again.
      physical = true;
      continue;
    }
    const next = current === "/" ? `/${part}` : `${current}/${part}`;
    // Only what the caller may read is resolved: a coding agent names any path, and reading one
    // outside the daemon's grant would throw, or, in a process started without `--no-prompt` at a
    // terminal, ask the person there to widen the grant.
    if (physical && Deno.permissions.querySync({ name: "read", path: next }).state !== "granted") {
      physical = false;
    }
    if (physical) {
      try {
        current = Deno.realPathSync(next);
        continue;
      } catch {
        // Not there (or not readable): the rest cannot hold a link we could follow.
        physical = false;
      }
    }
    current = next;
  }
  return current;
}

/** A permission option as ACP offers it (ids differ per agent; the kind does not). */
export interface PermissionOptionLike {
  optionId: string;
  kind: string;
}

/**
 * The option that carries a decision: `allow_once` for an approval,
 * `reject_once` (else `reject_always`) for a refusal. `allow_always` is never
 * chosen: a request offering only that is refused. `undefined`: nothing fits,
 * answer `cancelled`.
 */
export function chooseOption(
  options: readonly PermissionOptionLike[],
  allow: boolean,
): PermissionOptionLike | undefined {
  const kinds = allow ? ["allow_once"] : ["reject_once", "reject_always"];
  for (const k of kinds) {
    const o = options.find((o) => o.kind === k);
    if (o) return o;
  }
  return allow ? chooseOption(options, false) : undefined;
}
