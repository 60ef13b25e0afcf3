/**
 * Capability names (docs/protocol.md, "Caps"): the one validator for every place a
 * person, a model or a peer names a cap — `agent.caps` in config.toml and `wats config
 * set`, the `ask` and `agents` tools' `caps`, `wats try --caps`, the dashboard's caps
 * field, and a peer's `cap:` tags. A name is 1–64 characters: lowercase letters, digits
 * and `. _ + # -`, starting with a letter or a digit (`rust`, `c++`, `c#`, `node.js`).
 * What people type is read leniently first — trimmed, lowercased, a `cap:` prefix
 * dropped — so `Rust` and `cap:rust` name `rust`; anything else is refused, never kept.
 *
 * @module
 */

/** A capability name, as a `cap:` tag holds it after the prefix. */
export const CAP_NAME = /^[a-z0-9][a-z0-9._+#-]{0,63}$/;

/** The rule in words, for error messages. */
export const CAP_NAME_RULE = "1 to 64 lowercase letters, digits and . _ + # -, starting with a " +
  'letter or digit (e.g. "rust")';

/** True for a capability name as stored and compared (already normalised). */
export function isCapName(name: string): boolean {
  return CAP_NAME.test(name);
}

/** `raw` as a capability name (trimmed, lowercased, without `cap:`), or undefined when it is none. */
export function capName(raw: string): string | undefined {
  const name = raw.trim().toLowerCase().replace(/^cap:/, "");
  return CAP_NAME.test(name) ? name : undefined;
}
