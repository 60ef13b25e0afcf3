/**
 * The per-run tokens of the heartbeat runner (docs/decisions/run_socket.md): each run's MCP
 * session presents one, minted here and only here, so the MCP side can tell which run a session
 * speaks for. A token is good on mcp.sock until its run moves to a socket of its own (then only
 * there) or ends.
 *
 * @module
 */

import { bytesToHex } from "@noble/hashes/utils.js";

/** The live tokens, by token. */
export class RunTokens {
  readonly #tokens = new Map<string, { run: string; onMain: boolean }>();

  /** A fresh token for `runId`, good on mcp.sock. */
  mint(runId: string): string {
    const token = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
    this.#tokens.set(token, { run: runId, onMain: true });
    return token;
  }

  /** The run `token` speaks for on mcp.sock; undefined once it moved or ended. */
  runOnMain(token: string): string | undefined {
    const t = this.#tokens.get(token);
    return t?.onMain ? t.run : undefined;
  }

  /** `token`'s run is served on its own socket: mcp.sock refuses it from now on. */
  moveOffMain(token: string): void {
    const t = this.#tokens.get(token);
    if (t !== undefined) t.onMain = false;
  }

  /** Forgets one token. */
  revoke(token: string): void {
    this.#tokens.delete(token);
  }

  /** Forgets every token of `runId` (its run ended). */
  revokeRun(runId: string): void {
    for (const [t, v] of this.#tokens) if (v.run === runId) this.#tokens.delete(t);
  }

  /** Forgets them all (the runner stopped). */
  clear(): void {
    this.#tokens.clear();
  }
}
