/**
 * What a `deno compile` binary embeds, and what wats needs embedded, both read
 * from the code rather than from a hand-written list:
 *
 * - {@linkcode embeddedFiles} reads the binary's virtual file system: Deno 2.9
 *   appends it as one JSON tree (`[{"Dir":{"n":…,"e":[…]}}, …]`) preceded by its
 *   byte length (u64, little-endian). Its paths are relative to the project root.
 * - {@linkcode runtimeFiles} lists the files the code opens at run time by URL
 *   (`new URL("…", import.meta.url)`: HEARTBEAT.md, the workers folder, later
 *   dashboard assets), and {@linkcode requiredFiles} adds each worker module of
 *   the route table. A new worker or asset the compile does not `--include`
 *   is then missing from the binary, and the test names it.
 *
 * @module
 */

import { workerModules } from "../../src/cli/route.ts";

/** The project root, with a trailing slash. */
export const ROOT: string = new URL("../../", import.meta.url).pathname;

type VfsEntry =
  | { Dir: { n: string; e: VfsEntry[] } }
  | { File: { n: string } }
  | { Symlink: { n: string } };

/** The paths (relative to the project root) of every file in a compiled binary. */
export function embeddedFiles(binary: Uint8Array): string[] {
  const marker = new TextEncoder().encode('[{"Dir":{"n":"');
  const at = indexOf(binary, marker);
  if (at < 8) {
    throw new Error(
      "found no embedded file system in the binary: has `deno compile`'s format changed?",
    );
  }
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  const length = Number(view.getBigUint64(at - 8, true));
  const tree = JSON.parse(new TextDecoder().decode(binary.subarray(at, at + length))) as VfsEntry[];
  const out: string[] = [];
  const walk = (entries: VfsEntry[], prefix: string) => {
    for (const e of entries) {
      if ("Dir" in e) walk(e.Dir.e, `${prefix}${e.Dir.n}/`);
      else if ("File" in e) out.push(`${prefix}${e.File.n}`);
      else out.push(`${prefix}${e.Symlink.n}`);
    }
  };
  walk(tree, "");
  return out;
}

/**
 * The compiled binary's metadata (Deno 2.9: JSON after the `d3n0l4nd` marker
 * and its u64 length): the permissions and unstable features it runs with.
 */
export function compileMetadata(binary: Uint8Array): {
  permissions: Record<string, unknown>;
  unstable_config: { features: string[] };
} {
  const at = indexOf(binary, new TextEncoder().encode('{"argv":['));
  if (at < 8) throw new Error("found no compile metadata in the binary: has the format changed?");
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  const length = Number(view.getBigUint64(at - 8, true));
  return JSON.parse(new TextDecoder().decode(binary.subarray(at, at + length)));
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0];
  if (first === undefined) return -1;
  for (let i = haystack.indexOf(first); i !== -1; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

/**
 * Every `new URL("<relative>", import.meta.url)` under src/ and in main.ts,
 * resolved to a path relative to the project root (folders end in `/`).
 */
export function runtimeFiles(): string[] {
  const found = new Set<string>();
  const pattern = /new URL\(\s*"([^"]+)",\s*import\.meta\.url\s*\)/g;
  const scan = (file: string) => {
    const text = Deno.readTextFileSync(`${ROOT}${file}`);
    for (const m of text.matchAll(pattern)) {
      found.add(new URL(m[1]!, `file://${ROOT}${file}`).pathname.slice(ROOT.length));
    }
  };
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.name.endsWith(".ts")) scan(`${dir}/${e.name}`);
    }
  };
  scan("main.ts");
  walk("src");
  return [...found].sort();
}

/** What the binary must embed: the entry, the runtime files, every worker module. */
export function requiredFiles(): string[] {
  const files = runtimeFiles();
  const workersDir = files.find((f) => f.endsWith("/workers/"));
  if (workersDir === undefined) throw new Error("no code opens the workers folder by URL");
  return [
    "main.ts",
    ...files.filter((f) => !f.endsWith("/")),
    ...workerModules().map((w) => `${workersDir}${w}`),
  ].filter((f, i, all) => all.indexOf(f) === i).sort();
}

/** The required files that are not embedded. */
export function missingFiles(embedded: readonly string[], required: readonly string[]): string[] {
  const have = new Set(embedded);
  return required.filter((f) => !have.has(f));
}
