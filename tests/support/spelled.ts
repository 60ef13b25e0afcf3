/**
 * A path as a shell word that never spells it, nor any name in it: what an attack from inside a
 * sandbox uses so that no deny rule matching the path's text can stop it (docs/safety.md).
 *
 * @module
 */

/** `path` as pieces of at most four characters joined by `printf`. */
export function spelled(path: string): string {
  const pieces = path.match(/.{1,4}/g)!.map((x) => `'${x}'`).join(" ");
  return `"$(printf %s ${pieces})"`;
}
