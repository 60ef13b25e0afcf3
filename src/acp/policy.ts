/**
 * The wats policy for a coding agent's permission requests (issue 10, item 4).
 * Each `session/request_permission` is judged as a tool call named
 * `<harness>/<kind>` whose resources are the request's `locations`:
 *
 * 1. a location inside the data directory, other than the call's own worktree,
 *    is always refused (config.toml, safety.json, node.key, other worktrees),
 *    and so is any request but a read-only one that touches a `.git` inside the
 *    worktree;
 * 2. a `[policy] deny` rule that matches refuses (deny beats allow);
 * 3. a `[policy] allow` rule that matches allows;
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

import { absolute, isWithin } from "../config/paths.ts";

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

/** One parsed rule: `HARNESS/KIND` with an optional path glob. */
export interface Rule {
  text: string;
  harness: string;
  kind: string;
  /** Matched against each location; undefined: any request of that harness and kind. */
  glob?: RegExp;
}

/** The policy of one node: its rules and the paths it protects. */
export interface Policy {
  allow: Rule[];
  deny: Rule[];
  /** The data directory, resolved: never reachable through a request. */
  dataDir: string;
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
}

/** The policy's answer and why, in words for `refused` and the logs. */
export interface Decision {
  verdict: Verdict;
  reason: string;
}

/** Parses `policy.allow` / `policy.deny` (the schema already checked their shape). */
export function parseRules(texts: readonly string[]): Rule[] {
  return texts.map((text) => {
    const m = /^([^/]+)\/([^(]+)(?:\((.*)\))?$/.exec(text);
    if (!m) throw new Error(`not a policy rule: ${text}`);
    return { text, harness: m[1], kind: m[2], glob: m[3] === undefined ? undefined : globRe(m[3]) };
  });
}

/** Builds the policy from the settings. */
export function makePolicy(allow: readonly string[], deny: readonly string[], dataDir: string) {
  return { allow: parseRules(allow), deny: parseRules(deny), dataDir } satisfies Policy;
}

/**
 * A path glob: `*` is any run of characters but `/`, `**` any run including
 * `/`, `?` one character. A relative glob matches paths relative to the
 * worktree; an absolute one matches absolute paths.
 */
export function globRe(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
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
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** A location as a rule's glob sees it: relative inside the worktree, absolute outside. */
function shown(location: string, worktree: string): string {
  if (location === worktree) return ".";
  return isWithin(location, worktree) ? location.slice(worktree.length + 1) : location;
}

function matches(rule: Rule, ask: PermissionAsk, every: boolean): boolean {
  if (rule.harness !== "*" && rule.harness !== ask.harness) return false;
  if (rule.kind !== "*" && rule.kind !== ask.kind) return false;
  if (rule.glob === undefined) return true;
  if (ask.locations.length === 0) return false;
  const test = (l: string) => rule.glob!.test(shown(l, ask.worktree));
  // An allow rule must cover every location; a deny rule needs only one.
  return every ? ask.locations.every(test) : ask.locations.some(test);
}

/** Judges one permission request. */
export function decide(policy: Policy, ask: PermissionAsk): Decision {
  const name = `${ask.harness}/${ask.kind}`;
  const protectedHit = ask.locations.find((l) =>
    isWithin(l, policy.dataDir) && !isWithin(l, ask.worktree)
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
      isWithin(l, ask.worktree) && shown(l, ask.worktree).split("/").includes(".git")
    );
  if (gitMeta !== undefined) {
    return { verdict: "deny", reason: `${name} touches ${gitMeta}, the worktree's git metadata` };
  }
  const deny = policy.deny.find((r) => matches(r, ask, false));
  if (deny) return { verdict: "deny", reason: `${name} is denied by the rule ${deny.text}` };
  const allow = policy.allow.find((r) => matches(r, ask, true));
  if (allow) return { verdict: "allow", reason: `${name} is allowed by the rule ${allow.text}` };

  const cls = kindClass(ask.kind);
  if (cls === "destructive") {
    return { verdict: "deny", reason: `${name} is destructive and no rule allows it` };
  }
  if (cls === "gated") {
    return { verdict: "ask", reason: `${name} is gated: it needs a rule or a person's approval` };
  }
  const outside = ask.locations.find((l) => !isWithin(l, ask.worktree));
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
 * Resolves a request's location to an absolute path with `..` and symlinks
 * gone (as far as the path exists), so that `wt/../../config.toml` or a link
 * inside the worktree to the data dir is judged by where it really goes.
 *
 * Requires `--allow-read` on the path's existing ancestors (else the path is
 * only normalised). Only ancestors the caller may read are resolved: a coding
 * agent names any path, and reading one outside the daemon's grant would throw,
 * or, in a process started without `--no-prompt` at a terminal, ask the person
 * there to widen the grant.
 */
export function resolveLocation(path: string, cwd: string): string {
  const abs = absolute(path, cwd);
  const parts = abs.split("/");
  for (let n = parts.length; n > 1; n--) {
    const head = parts.slice(0, n).join("/") || "/";
    if (Deno.permissions.querySync({ name: "read", path: head }).state !== "granted") continue;
    try {
      const real = Deno.realPathSync(head);
      return absolute([real, ...parts.slice(n)].join("/"), "/");
    } catch {
      // Not there (or not readable): try its parent.
    }
  }
  return abs;
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
