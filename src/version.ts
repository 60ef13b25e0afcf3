/** The version of wats, shown by `--version`, the banner and MCP. @module */

/** The version printed by `wats --version`. */
export const VERSION = "0.1.0";
