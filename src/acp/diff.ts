/**
 * Reads `git diff -p` output into files and hunks (src/contracts/works.ts),
 * for `wats work show` and the dashboard's work page. Pure: git runs elsewhere
 * (src/acp/works.ts). Counts cover the whole diff; the lines kept are capped,
 * so a huge diff costs the page no more than the caps.
 *
 * @module
 */

import type { DiffFile, DiffHunk } from "../contracts/works.ts";

/** How many diff lines are kept, in all and per file. */
export interface DiffCaps {
  total: number;
  perFile: number;
  /** Files past this many are left out (and `cut` says so). */
  files: number;
  /** The characters of line text kept in all: the diff travels as one line on the socket. */
  chars: number;
  /** A longer line (minified code) is kept this long, and its file is marked cut. */
  lineChars: number;
}

/** The caps `wats work show` and the work page use. */
export const DIFF_CAPS: DiffCaps = {
  total: 20_000,
  perFile: 10_000,
  files: 2_000,
  chars: 1_500_000,
  lineChars: 2_000,
};

/** The parsed diff, and whether anything was left out. */
export interface ParsedDiff {
  files: DiffFile[];
  /** True when files were left out, or some file's lines were. */
  cut: boolean;
}

/**
 * Parses the output of `git diff -p -M --no-color` (paths as git quotes them,
 * `a/` and `b/` prefixes).
 */
export function parseDiff(text: string, caps: DiffCaps = DIFF_CAPS): ParsedDiff {
  const files: DiffFile[] = [];
  let cut = false;
  let shown = 0;
  let chars = 0;
  let file: DiffFile | undefined;
  let hunk: DiffHunk | undefined;
  let kept = 0;
  let oldNo = 0;
  let newNo = 0;
  let dropped = false;
  const lines = text.split("\n");
  // A diff ends with a newline: the last, empty element is no line.
  if (lines.at(-1) === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      hunk = undefined;
      kept = 0;
      if (files.length >= caps.files) {
        dropped = true;
        cut = true;
        file = undefined;
        continue;
      }
      dropped = false;
      const [a, b] = headerPaths(line.slice("diff --git ".length));
      file = {
        path: b,
        status: "modified",
        binary: false,
        additions: 0,
        deletions: 0,
        hunks: [],
        cut: false,
      };
      if (a !== b) file.oldPath = a;
      files.push(file);
      continue;
    }
    if (file === undefined || dropped) continue;
    if (hunk === undefined) {
      // The extended header, before the first hunk.
      if (line.startsWith("new file mode")) file.status = "added";
      else if (line.startsWith("deleted file mode")) file.status = "deleted";
      else if (line.startsWith("rename from ")) {
        file.oldPath = unquote(line.slice("rename from ".length));
        file.status = "renamed";
      } else if (line.startsWith("rename to ")) {
        file.path = unquote(line.slice("rename to ".length));
        file.status = "renamed";
      } else if (line.startsWith("Binary files ") || line === "GIT binary patch") {
        file.binary = true;
      } else if (line.startsWith("--- ") || line.startsWith("+++ ")) {
        // git ends a path that has a space with a tab, so a reader knows where it ends.
        const p = line.slice(4).replace(/\t$/, "");
        if (p !== "/dev/null" && line.startsWith("+++ ")) file.path = stripPrefix(unquote(p));
      }
    }
    if (line.startsWith("@@")) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      oldNo = m ? Number(m[1]) : 0;
      newNo = m ? Number(m[2]) : 0;
      hunk = { header: line, lines: [] };
      if (keep(line.length)) file.hunks.push(hunk);
      continue;
    }
    if (hunk === undefined) continue;
    const op = line[0];
    if (op === "+") {
      file.additions++;
      if (keep(line.length)) hunk.lines.push({ op: "+", text: clip(line), new: newNo });
      newNo++;
    } else if (op === "-") {
      file.deletions++;
      if (keep(line.length)) hunk.lines.push({ op: "-", text: clip(line), old: oldNo });
      oldNo++;
    } else if (op === " " || line === "") {
      if (keep(line.length)) {
        hunk.lines.push({ op: " ", text: clip(line), old: oldNo, new: newNo });
      }
      oldNo++;
      newNo++;
    }
    // `\ No newline at end of file` marks the line before it; nothing to show apart.
  }
  // Only a rename keeps its old path (a deleted file keeps the one path it had).
  for (const f of files) if (f.status !== "renamed") delete f.oldPath;
  return { files, cut };

  /** Counts one more line shown, or marks the file cut when the caps are reached. */
  function keep(length: number): boolean {
    const size = Math.min(length, caps.lineChars);
    if (kept < caps.perFile && shown < caps.total && chars + size <= caps.chars) {
      kept++;
      shown++;
      chars += size;
      return true;
    }
    if (file !== undefined && !file.cut) {
      file.cut = true;
      cut = true;
    }
    return false;
  }

  /** A diff line's text without its op, cut at `lineChars` (its file then reads as cut). */
  function clip(line: string): string {
    if (line.length - 1 <= caps.lineChars) return line.slice(1);
    file!.cut = true;
    cut = true;
    return `${line.slice(1, caps.lineChars)}…`;
  }
}

/** The two paths of a `diff --git a/X b/Y` header (quoted when git quoted them). */
function headerPaths(rest: string): [string, string] {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    const a = stripPrefix(unquote(rest.slice(0, end + 1)));
    return [a, stripPrefix(unquote(rest.slice(end + 2)))];
  }
  if (rest.endsWith('"')) {
    const start = rest.lastIndexOf(' "');
    return [stripPrefix(rest.slice(0, start)), stripPrefix(unquote(rest.slice(start + 1)))];
  }
  // Unquoted: both paths are equal unless renamed, and a rename's header lines name them.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    const a = rest.slice(0, half);
    const b = rest.slice(half + 1);
    if (a.slice(2) === b.slice(2)) return [stripPrefix(a), stripPrefix(b)];
  }
  const at = rest.indexOf(" b/");
  return [stripPrefix(rest.slice(0, at)), stripPrefix(rest.slice(at + 1))];
}

function closingQuote(s: string): number {
  for (let i = 1; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i;
  }
  return s.length - 1;
}

function stripPrefix(p: string): string {
  return p.startsWith("a/") || p.startsWith("b/") ? p.slice(2) : p;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };

/** Undoes git's C-style quoting of a path (`"d\303\251j\303\240.txt"`), bytes as UTF-8. */
export function unquote(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 1; i < s.length - 1; i++) {
    const c = s[i]!;
    if (c !== "\\") {
      bytes.push(...enc.encode(c));
      continue;
    }
    const n = s[++i] ?? "";
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(s.slice(i, i + 3), 8));
      i += 2;
    } else {
      bytes.push(ESCAPES[n] ?? n.charCodeAt(0));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
