/**
 * A work's diff against its base (src/contracts/works.ts `DiffFile`) as HTML:
 * one block per file with its additions and deletions, each hunk's lines in a
 * table with their old and new numbers, added and deleted lines marked by a
 * class the stylesheet colours. File names and lines are the coding agent's
 * text: they go through `markup`, which escapes them, and `visible`, which
 * shows bidi and control characters instead of applying them.
 *
 * Large diffs stay cheap to load: a file longer than `DIFF_OPEN_LINES` is
 * collapsed (a `<details>` the person opens); once the work page holds
 * `DIFF_INLINE_LINES` lines, further files are only listed, each with a link
 * to its own pages of at most `DIFF_PAGE_LINES` lines. A file the daemon cut
 * or a binary file says so instead of showing lines.
 *
 * @module
 */

import type { DiffFile, DiffLine } from "../contracts/works.ts";
import { joinMarkup, type Markup, markup, raw } from "./markup.ts";

/** A file whose diff has more lines than this is shown collapsed. */
export const DIFF_OPEN_LINES = 300;
/** The work page holds at most this many diff lines; further files get their own pages. */
export const DIFF_INLINE_LINES = 1500;
/** Lines per page of one file's diff (whole hunks; at least one). */
export const DIFF_PAGE_LINES = 500;

/** What the diff view needs beyond the files. */
export interface DiffViewOptions {
  /** `git diff BASE...BRANCH`: what a cut file names to see all of it (in the checkout). */
  gitDiff: string;
  /**
   * Where a file's "comment" link goes (the send-back form, prefilled with the
   * file), and a new line's number (prefilled with the file and that line).
   */
  commentHref: (path: string, line?: number) => string;
  /** The page of one file's diff, from hunk `hunk` (0 when absent). */
  fileHref: (path: string, hunk?: number) => string;
}

/** Rows a file's diff takes: its lines and one header per hunk. */
function rowsOf(f: DiffFile): number {
  return f.hunks.reduce((n, h) => n + h.lines.length + 1, 0);
}

/** The files of a diff, in the order given, within the work page's budget of lines. */
export function diffView(files: readonly DiffFile[], opts: DiffViewOptions): Markup {
  let inline = 0;
  const blocks = files.map((f) => {
    const rows = rowsOf(f);
    const fits = inline + rows <= DIFF_INLINE_LINES;
    if (fits && !f.binary && !f.cut) inline += rows;
    return fileBlock(f, rows, fits ? rows <= DIFF_OPEN_LINES : "elsewhere", opts);
  });
  return joinMarkup(blocks, raw("\n"));
}

/** One file's diff alone, from hunk `from`, at most `DIFF_PAGE_LINES` lines (whole hunks). */
export function fileDiffView(f: DiffFile, from: number, opts: DiffViewOptions): Markup {
  let end = from;
  let rows = 0;
  while (end < f.hunks.length) {
    const n = f.hunks[end]!.lines.length + 1;
    if (end > from && rows + n > DIFF_PAGE_LINES) break;
    rows += n;
    end++;
  }
  const part = { ...f, hunks: f.hunks.slice(from, end) };
  const paging = markup`<p class="paging">${
    from > 0 &&
    markup`<a id="earlier" href="${
      opts.fileHref(f.path, Math.max(0, earlierStart(f, from)))
    }">Earlier lines</a> `
  }${
    end < f.hunks.length &&
    markup`<a id="later" href="${opts.fileHref(f.path, end)}">Later lines</a>`
  }</p>`;
  return markup`<p>Hunks ${Math.min(from + 1, f.hunks.length)}–${end} of ${f.hunks.length}.</p>
${fileBlock(part, rows, true, opts)}${paging}`;
}

/** Where the page before the one starting at hunk `from` starts. */
function earlierStart(f: DiffFile, from: number): number {
  let start = from;
  let rows = 0;
  while (start > 0) {
    const n = f.hunks[start - 1]!.lines.length + 1;
    if (start < from && rows + n > DIFF_PAGE_LINES) break;
    rows += n;
    start--;
  }
  return start;
}

/** A file: open, collapsed, or (over the page's budget) listed with a link to its own pages. */
function fileBlock(
  f: DiffFile,
  rows: number,
  open: boolean | "elsewhere",
  opts: DiffViewOptions,
): Markup {
  const name = f.oldPath !== undefined && f.oldPath !== f.path
    ? markup`<code>${visible(f.oldPath)}</code> → <code>${visible(f.path)}</code>`
    : markup`<code>${visible(f.path)}</code>`;
  const counts = f.binary
    ? markup`<span class="binary">binary</span>`
    : markup`<span class="adds">+${f.additions}</span> <span class="dels">−${f.deletions}</span>`;
  const lines = !f.binary && !f.cut && f.hunks.length > 0;
  const body = f.binary
    ? markup`<p class="empty">Binary file: not shown.</p>`
    : f.cut
    ? markup`<p class="notice warn">This file's diff is too long to show here (+${f.additions} −${f.deletions}): see all of it with <code>${opts.gitDiff} -- ${
      visible(f.path)
    }</code> in the checkout.</p>`
    : !lines
    ? markup`<p class="empty">No lines changed (${f.status}).</p>`
    : open === "elsewhere"
    ? markup`<p><a class="file-page" href="${
      opts.fileHref(f.path)
    }">show this file's diff</a> (too long for this page: it has its own pages)</p>`
    : markup`<table class="diff"><colgroup><col class="ln"><col class="ln"><col></colgroup>${
      f.hunks.map((h) => hunkRows(h.header, h.lines, (n) => opts.commentHref(f.path, n)))
    }</table>`;
  const note = lines && open === false &&
    markup` <span class="meta">(${rows} lines, collapsed)</span>`;
  // Open when short or when the diff is elsewhere (the block is then one line).
  return markup`<details class="diff-file" data-path="${f.path}"${open !== false && raw(" open")}>
<summary>${name} <span class="status">${f.status}</span> ${counts}${note} <a class="comment" href="${
    opts.commentHref(f.path)
  }">comment</a></summary>
${body}
</details>`;
}

const ROW_CLASS: Record<DiffLine["op"], string> = { "+": "add", "-": "del", " ": "ctx" };

/** A hunk's rows; a new line's number links to the send-back form about that line. */
function hunkRows(
  header: string,
  lines: readonly DiffLine[],
  lineHref: (line: number) => string,
): Markup {
  const rows = lines.map((l) =>
    markup`<tr class="${ROW_CLASS[l.op]}"><td class="ln">${l.old}</td><td class="ln">${
      l.new !== undefined && markup`<a href="${lineHref(l.new)}">${l.new}</a>`
    }</td><td class="code">${l.op}${visible(l.text)}</td></tr>`
  );
  return markup`<tr class="hunk"><td colspan="3">${visible(header)}</td></tr>${
    joinMarkup(rows, raw("\n"))
  }`;
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
