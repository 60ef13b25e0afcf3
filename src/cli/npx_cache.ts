/**
 * `npx -y deno@… task …` runs a Deno that lives in npx's cache (`~/.npm/_npx/<hash>/…`), which npm
 * may clear at any time. A command that writes this program's path somewhere lasting (`wats setup`
 * registers it in Claude Code or Codex, `wats service install` puts it in a unit) says so, with
 * the way to a path that stays.
 *
 * @module
 */

/**
 * The one-line warning for `self` (`ctx.self`) when its program is in npx's cache, else
 * undefined; `what` names what would stop working (`the Codex entry`).
 */
export function npxCacheWarning(self: readonly string[], what: string): string | undefined {
  const program = self[0] ?? "";
  if (!program.split(/[/\\]/).includes("_npx")) return undefined;
  return `warning: ${program} is in npx's cache, which npm may delete, and ${what} with it: ` +
    "install Deno (npm i -g deno@2.9.6) or use the compiled wats binary, then run this again";
}
