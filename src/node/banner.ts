/**
 * The short banner the daemon prints on stderr at start (docs/decisions/runner.md): who this
 * node is, where its files are, whether an agent runs and where posts go.
 *
 * @module
 */

/** What the banner shows. */
export interface BannerInfo {
  version: string;
  nodeId: string;
  profiles: Array<{ role: string; name: string; npub: string }>;
  dataDir: string;
  socket: string;
  agent: string;
  relays: string[];
  listen: string;
  notices: string[];
  /** The coding agents and checkouts of config.toml (src/config/acp_tables.ts `acpLines`). */
  acp?: string[];
}

/** Renders the banner as lines of text. */
export function renderBanner(b: BannerInfo): string {
  const lines = [
    `wats ${b.version} · node ${b.nodeId}`,
    ...b.profiles.map((p) => `  ${p.role.padEnd(8)} ${p.name} ${p.npub}`),
    `  data     ${b.dataDir}`,
    `  socket   ${b.socket}`,
    `  agent    ${b.agent}`,
    `  network  ${b.relays.length > 0 ? b.relays.join(", ") : "local only"}${
      b.listen ? ` · relay endpoint ws://${b.listen}` : ""
    }`,
    ...(b.acp ?? []).map((l) => `  ${l}`),
    ...b.notices.map((n) => `  ! ${n}`),
  ];
  return lines.join("\n");
}

/** The banner's line when the launcher left PATH entries out. */
export function droppedPathLine(dropped: readonly string[]): string {
  return `PATH: left out ${dropped.map((e) => JSON.stringify(e)).join(", ")}: programs ` +
    "(claude, codex, git, bwrap) are never looked up in the node_modules/.bin folders npx adds " +
    "for the folders around where wats started, nor in relative entries";
}
