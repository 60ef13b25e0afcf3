/**
 * What a new session of a coding agent is told first: the context files of
 * its harness (`context` in `[harnesses.NAME]`, docs/acp.md), read from the worktree.
 *
 * @module
 */

import type { ContentBlock } from "@agentclientprotocol/sdk";

/**
 * The context files of a new session, as text blocks. Missing files are
 * skipped, and so is one that resolves outside the worktree or into its `.git`:
 * the daemon reads with its own rights, so a committed `CLAUDE.md -> ../node.key`
 * link must not hand the coding agent what its own requests cannot reach.
 */
export async function contextBlocks(
  worktree: string,
  files: readonly string[],
): Promise<ContentBlock[]> {
  const out: ContentBlock[] = [];
  for (const f of files) {
    try {
      const real = await Deno.realPath(`${worktree}/${f}`);
      const inside = real.startsWith(worktree + "/") &&
        !real.slice(worktree.length + 1).split("/").includes(".git");
      if (!inside) continue;
      const text = await Deno.readTextFile(real);
      out.push({ type: "text", text: `Context from ${f}:\n\n${text}` });
    } catch {
      // Not in this checkout.
    }
  }
  return out;
}
