/**
 * The `agents` tool: the agents this node knows from their presence (caps, state,
 * last seen), filtered by the caps or addressees an ask would name, so a model can
 * tell before posting whether anyone can take its ask (docs/mcp.md). The `ask`
 * tool's result says the same in one line (`reachLine`).
 *
 * @module
 */

import { decode, npubEncode } from "nostr-tools/nip19";
import { z } from "zod";
import { WatsError } from "../errors.ts";
import { CAP_NAME_RULE, capName } from "../cap_name.ts";
import { MAX_CAPS } from "../posts/post.ts";
import { echoed } from "../posts/fence.ts";
import { formatKnownAgent, formatReach } from "./format_agents.ts";
import type { ToolContext, ToolOutput, ToolSpec } from "./tool_spec.ts";

/** The most agents one call lists. */
export const MAX_AGENTS_LISTED = 200;

/** The one line an ask's result ends with: how many known agents it is for. */
export function reachLine(
  ctx: ToolContext,
  caps: readonly string[] | undefined,
  to?: readonly string[],
): string {
  const c = normCaps(caps ?? []);
  const keys = judgeKeys(to ?? []);
  return formatReach(ctx.service.reach(ctx.session, c, keys), c, keys);
}

/** The `agents` tool. */
export const agentsTool: ToolSpec = {
  name: "agents",
  title: "Known agents",
  description:
    "Agents known from their presence: caps, state (running, paused, halted, off), last seen. " +
    "Filter by the caps or to of an ask you plan, to see who it would reach.",
  input: {
    caps: z.array(z.string()).optional().describe(
      `Only agents with one of these caps; at most ${MAX_CAPS}.`,
    ),
    to: z.array(z.string()).optional().describe("Only these agents (npub or hex keys)."),
  },
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  // A run learns who an ask reaches from the ask's own result.
  interactiveOnly: true,
  run: (ctx, args): ToolOutput => {
    const caps = normCaps((args.caps as string[] | undefined) ?? []);
    const to = judgeKeys((args.to as string[] | undefined) ?? []);
    const addressed = new Set<string>(to.map((k) => npubEncode(k)));
    const agents = ctx.service.agents().filter((a) =>
      addressed.size > 0
        ? addressed.has(a.npub)
        : caps.length === 0 || caps.some((c) => a.caps.includes(c))
    ).slice(0, MAX_AGENTS_LISTED);
    const reach = formatReach(ctx.service.reach(ctx.session, caps, to), caps, to);
    const text = agents.length === 0
      ? `No known agent fits. ${reach}`
      : `${reach}\n${agents.map((a) => `- ${formatKnownAgent(a)}`).join("\n")}`;
    return { text, data: { agents } };
  },
};

function normCaps(values: readonly string[]): string[] {
  if (values.length > MAX_CAPS) {
    throw new WatsError("mcp.bad_caps", `${values.length} caps given: name at most ${MAX_CAPS}.`);
  }
  const out = values.map((v) => {
    const c = capName(v);
    if (c === undefined) {
      throw new WatsError(
        "mcp.bad_caps",
        `cap "${echoed(v)}" is not a capability name: use ${CAP_NAME_RULE}.`,
      );
    }
    return c;
  });
  return [...new Set(out)];
}

/** Npubs or hex keys as hex; a value that is neither is refused with what to give. */
function judgeKeys(values: readonly string[]): string[] {
  if (values.length > MAX_CAPS) {
    throw new WatsError("mcp.bad_to", `${values.length} agents named: name at most ${MAX_CAPS}.`);
  }
  return values.map((raw) => {
    const v = raw.trim();
    if (/^[0-9a-f]{64}$/i.test(v)) return v.toLowerCase();
    try {
      const d = decode(v);
      if (d.type === "npub") return d.data;
    } catch {
      // refused below
    }
    throw new WatsError(
      "mcp.bad_to",
      `"${echoed(raw)}" is not an agent key: give an npub (npub1…) or 64 hex characters.`,
    );
  });
}
