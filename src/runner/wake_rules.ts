/**
 * Which new posts concern the agent (docs/decisions/runner.md, "When it wakes the agent").
 *
 * An event of interest is an `ask` for the agent, or a direct reply to one of the
 * agent's posts (its parent's author is the agent, so answers to its clarify count;
 * sibling answers in the same thread do not). An ask is for the agent by its routing
 * (docs/decisions/runner.md, "Routing"): an ask with `to` only when the agent's key
 * is in it (its caps then only describe it); else an ask with caps only when
 * `agent.caps` holds them (`agent.caps_match`: any or all); else, an open ask,
 * unless `agent.open_asks` is false. Only actionable kinds wake it; feedback
 * kinds replying to its posts are remembered for the next run's prompt. Never the
 * agent's own posts; with `agent.ignore_local`, never the node's other profiles;
 * only authors in `agent.allow` when that list is not empty. The kind rules come
 * first, so a skip is put down to an author setting only when it decided. On top of the rules,
 * `agent.wakes_per_author_per_hour` caps how often one author can wake it.
 *
 * @module
 */

import { ACTIONABLE, FEEDBACK } from "../posts/kinds.ts";
import { ConfigError } from "../errors.ts";
import { authorKeyHex } from "../author_key.ts";
import { type RunnerPost, threadOf } from "./ports.ts";
import { HOUR_MS } from "../duration.ts";

/** Kinds that can wake the agent. */
export const ACTIONABLE_KINDS: ReadonlySet<string> = new Set(ACTIONABLE);

/** Kinds that never wake it: listed in the next run's prompt when they reply to the agent. */
export const FEEDBACK_KINDS: ReadonlySet<string> = new Set(FEEDBACK);

/** What the runner does with one new post. */
export type WakeDecision =
  | { action: "wake"; reason: string; thread: string }
  | { action: "feedback"; reason: string; thread: string }
  /** `setting`: the setting that decided it, when one did (src/runner/skips.ts). */
  | { action: "ignore"; reason: string; setting?: SkipSetting };

/**
 * The settings a skip is put down to. An ask routed to other agents is not a
 * skip (in a network most asks are for others); a local author's ask that
 * `agent.caps` or `agent.open_asks` keeps out is, as its person may be trying
 * the agent out and must be able to see why nothing happened.
 */
export type SkipSetting = "agent.ignore_local" | "agent.allow" | "agent.caps" | "agent.open_asks";

/** What the rules need to know. */
export interface WakeContext {
  /** The agent profile's author key (hex). */
  agentKey: string;
  /** Every author key this node signs for (its profiles, past ones included). */
  localAuthors: () => ReadonlySet<string>;
  /** `agent.ignore_local`. */
  ignoreLocal: boolean;
  /** `agent.allow`, as hex (see `normalizeAllow`); empty: anyone. */
  allow: ReadonlySet<string>;
  /** `agent.caps`, as names (see `normalizeCaps`); empty: the agent wakes for no cap ask. */
  caps: ReadonlySet<string>;
  /** `agent.caps_match`: an ask's caps match when the agent holds any, or all, of them. */
  capsMatch: "any" | "all";
  /** `agent.open_asks`: whether an ask for anyone (no `to`, no caps) wakes the agent. */
  openAsks: boolean;
  /** Looks up a post's parent. */
  get: (id: string) => Pick<RunnerPost, "author"> | undefined;
}

/**
 * Turns `agent.allow` entries (npub or 64 hex) into lowercase hex keys.
 *
 * @throws {ConfigError} code `agent.allow` naming an entry that is neither.
 */
export function normalizeAllow(entries: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) {
    const hex = authorKeyHex(e.trim());
    if (hex === undefined) {
      throw new ConfigError(
        "agent.allow",
        `agent.allow: "${e}" is not an author key: use an npub1… or 64 hex characters`,
      );
    }
    out.add(hex);
  }
  return out;
}

/**
 * `agent.caps` as ask caps are compared: lower case, without a `cap:` prefix
 * (what `judgeDraft` does to an ask's caps, and validation holds a peer's to).
 */
export function normalizeCaps(entries: readonly string[]): Set<string> {
  return new Set(
    entries.map((c) => c.trim().toLowerCase().replace(/^cap:/, "")).filter((c) => c !== ""),
  );
}

/**
 * Applies the wake rules to one new post. Pure: the per-author cap is `WakeLimiter`.
 * An ask or reply that only an author setting keeps from waking the agent says
 * which (`setting`): those are the decisions a person needs to see.
 */
export function classifyPost(post: RunnerPost, ctx: WakeContext): WakeDecision {
  const short = post.id.slice(0, 12);
  if (post.author === ctx.agentKey) {
    return { action: "ignore", reason: `${post.kind} ${short} is the agent's own post` };
  }
  const d = classifyKind(post, ctx, short);
  if (d.action === "ignore") return d;
  if (ctx.ignoreLocal && ctx.localAuthors().has(post.author)) {
    return {
      action: "ignore",
      reason: `${post.kind} ${short} is by another profile of this node (agent.ignore_local = ` +
        "true: try `wats try`, docs/getting-started.md)",
      ...(d.action === "wake" ? { setting: "agent.ignore_local" } : {}),
    };
  }
  if (ctx.allow.size > 0 && !ctx.allow.has(post.author)) {
    return {
      action: "ignore",
      reason: `${post.kind} ${short} is by an author not in agent.allow`,
      ...(d.action === "wake" ? { setting: "agent.allow" } : {}),
    };
  }
  return d;
}

/** The rules by kind and parent, before the author settings. */
function classifyKind(post: RunnerPost, ctx: WakeContext, short: string): WakeDecision {
  const parent = post.parent !== undefined ? ctx.get(post.parent) : undefined;
  const repliesToAgent = parent !== undefined && parent.author === ctx.agentKey;
  const thread = threadOf(post);
  if (ACTIONABLE_KINDS.has(post.kind)) {
    if (post.kind === "ask") return routeAsk(post, ctx, short, thread);
    if (repliesToAgent) {
      return {
        action: "wake",
        reason: `${post.kind} ${short} replies to the agent's post`,
        thread,
      };
    }
    return {
      action: "ignore",
      reason: `${post.kind} ${short} does not reply to the agent's posts`,
    };
  }
  if (FEEDBACK_KINDS.has(post.kind)) {
    if (repliesToAgent) {
      return { action: "feedback", reason: `${post.kind} ${short} on the agent's post`, thread };
    }
    return { action: "ignore", reason: `${post.kind} ${short} is feedback on someone else's post` };
  }
  return { action: "ignore", reason: `${post.kind} ${short} never wakes the agent` };
}

/** Whether an ask is for the agent: by `to`, else by caps, else as an open ask. */
function routeAsk(post: RunnerPost, ctx: WakeContext, short: string, thread: string): WakeDecision {
  if (post.to.length > 0) {
    if (post.to.includes(ctx.agentKey)) {
      return { action: "wake", reason: `new ask ${short}, addressed to the agent`, thread };
    }
    return { action: "ignore", reason: `ask ${short} is addressed to other agents` };
  }
  // Only a local author's person may be trying the agent out: a skip worth showing.
  const skip = (setting: SkipSetting) => ctx.localAuthors().has(post.author) ? { setting } : {};
  if (post.caps.length > 0) {
    const held = post.caps.filter((c) => ctx.caps.has(c));
    const all = ctx.capsMatch === "all";
    if (all ? held.length === post.caps.length : held.length > 0) {
      return { action: "wake", reason: `new ask ${short} for caps ${held.join(", ")}`, thread };
    }
    const names = post.caps.join(", ");
    return {
      action: "ignore",
      reason: ctx.caps.size === 0
        ? `ask ${short} names caps (${names}) and agent.caps is empty`
        : `ask ${short} names caps (${names}) and agent.caps holds ${all ? "not all" : "none"} ` +
          `of them (agent.caps_match = ${ctx.capsMatch})`,
      ...skip("agent.caps"),
    };
  }
  if (!ctx.openAsks) {
    return {
      action: "ignore",
      reason: `ask ${short} is open (no to, no caps) and agent.open_asks = false`,
      ...skip("agent.open_asks"),
    };
  }
  return { action: "wake", reason: `new ask ${short}`, thread };
}

/**
 * `agent.wakes_per_author_per_hour`: how many posts by one author may wake the
 * agent in any sliding hour (0: unlimited). Counts only posts that woke it.
 */
export class WakeLimiter {
  readonly #max: number;
  readonly #wakes = new Map<string, number[]>();

  constructor(maxPerHour: number) {
    this.#max = maxPerHour;
  }

  /** Records a wake by `author` at `now` and returns true, or false when the cap is reached. */
  take(author: string, now: number): boolean {
    if (this.#max <= 0) return true;
    const recent = (this.#wakes.get(author) ?? []).filter((t) => now - t < HOUR_MS);
    if (recent.length >= this.#max) {
      this.#wakes.set(author, recent);
      return false;
    }
    recent.push(now);
    this.#wakes.set(author, recent);
    return true;
  }
}
