/**
 * A work's diff against its base (src/contracts/works.ts `DiffFile`) as HTML:
 * one block per file with its additions and deletions, each hunk's lines in a
 * table with their old and new numbers, added and deleted lines marked by a
 * class the stylesheet colours. File names and lines are the coding agent's
 * text: they go through `markup`, which escapes them. A long file is
 * collapsed (a `<details>` the person opens), so a page with a 5,000-line
 * diff opens at its list of files; a file the daemon cut or a binary file
 * says so instead of showing lines.
 *
 * @module
 */

import type { DiffFile, DiffLine } from "../contracts/works.ts";
import { joinMarkup, type Markup, markup, raw } from "./markup.ts";

/** A file whose diff has more lines than this is shown collapsed. */
export const DIFF_OPEN_LINES = 300;
/** Once the files shown open reach this many lines, every further file is collapsed. */
export const DIFF_OPEN_TOTAL = 1500;

/** What the diff view needs beyond the files. */
export interface DiffViewOptions {
  /** The work's id: a cut file names `wats work show ID`. */
  work: string;
  /** Where a file's "comment" link goes, given the file's path (the send-back form, prefilled). */
  commentHref: (path: string) => string;
}

/** The files of a diff, in the order given. */
export function diffView(files: readonly DiffFile[], opts: DiffViewOptions): Markup {
  let open = 0;
  const blocks = files.map((f) => {
    const lines = f.hunks.reduce((n, h) => n + h.lines.length + 1, 0);
    const shown = !f.binary && !f.cut && lines <= DIFF_OPEN_LINES &&
      open + lines <= DIFF_OPEN_TOTAL;
    if (shown) open += lines;
    return fileBlock(f, lines, shown, opts);
  });
  return joinMarkup(blocks, raw("\n"));
}

function fileBlock(f: DiffFile, lines: number, open: boolean, opts: DiffViewOptions): Markup {
  const name = f.oldPath !== undefined && f.oldPath !== f.path
    ? markup`<code>${visible(f.oldPath)}</code> → <code>${visible(f.path)}</code>`
    : markup`<code>${visible(f.path)}</code>`;
  const counts = f.binary
    ? markup`<span class="binary">binary</span>`
    : markup`<span class="adds">+${f.additions}</span> <span class="dels">−${f.deletions}</span>`;
  const body = f.binary
    ? markup`<p class="empty">Binary file: not shown.</p>`
    : f.cut
    ? markup`<p class="notice warn">This file's diff is too long to show here (+${f.additions} −${f.deletions}): run <code>wats work show ${opts.work}</code> in a terminal.</p>`
    : f.hunks.length === 0
    ? markup`<p class="empty">No lines changed (${f.status}).</p>`
    : markup`<table class="diff">${f.hunks.map((h) => hunkRows(h.header, h.lines))}</table>`;
  // `open` only when short: the summary line alone is what a long diff lists.
  return markup`<details class="diff-file" data-path="${f.path}"${open && raw(" open")}>
<summary>${name} <span class="status">${f.status}</span> ${counts}${
    !open && !f.binary && !f.cut && markup` <span class="meta">(${lines} lines, collapsed)</span>`
  } <a class="comment" href="${opts.commentHref(f.path)}">comment</a></summary>
${body}
</details>`;
}

const ROW_CLASS: Record<DiffLine["op"], string> = { "+": "add", "-": "del", " ": "ctx" };

function hunkRows(header: string, lines: readonly DiffLine[]): Markup {
  // One row per line: a 5,000-line diff is 5,000 short rows, no per-line fragment nesting.
  const rows = lines.map((l) =>
    markup`<tr class="${
      ROW_CLASS[l.op]
    }"><td class="ln">${l.old}</td><td class="ln">${l.new}</td><td class="code">${l.op}${
      visible(l.text)
    }</td></tr>`
  );
  return markup`<tr class="hunk"><td colspan="3">${header}</td></tr>${joinMarkup(rows, raw("\n"))}`;
}

/**
 * Bidi and control characters (but the tab) as visible `⟨U+XXXX⟩`: they can
 * make a line read otherwise than it compiles ("Trojan Source"), and a diff
 * is what a person reviews before merging.
 */
export function visible(text: string): string {
  return text.replace(
    // deno-lint-ignore no-control-regex
    /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
