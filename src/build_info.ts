/**
 * What the release build knows and a source checkout does not. The release
 * workflow (.github/workflows/release.yml) overwrites this file with the tagged
 * commit before `deno compile`; it is never committed with a value.
 *
 * @module
 */

/** The git commit the binary was built from; empty in a source checkout. */
export const BUILD_COMMIT: string = "";
