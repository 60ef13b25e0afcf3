/** The `markup` tag the dashboard's pages are built with: text is escaped unless it is marked markup. */

import assert from "node:assert/strict";
import { joinMarkup, Markup, markup, raw } from "../../src/ui/markup.ts";

const EVIL = `"'&<script>alert(1)</script><img src=x onerror="a">`;
const ESCAPED =
  "&#34;&#39;&#38;&#60;script&#62;alert(1)&#60;/script&#62;&#60;img src=x onerror=&#34;a&#34;&#62;";

Deno.test("every value in a markup template is escaped by default, in content and in attributes", () => {
  assert.equal(
    markup`<p title="${EVIL}">${EVIL}</p>`.toString(),
    `<p title="${ESCAPED}">${ESCAPED}</p>`,
  );
  assert.equal(markup`<b>${42}</b>`.toString(), "<b>42</b>");
});

Deno.test("a markup fragment or a raw constant goes in as markup, never escaped twice", () => {
  const inner = markup`<i>${EVIL}</i>`;
  assert.equal(markup`<p>${inner}</p>`.toString(), `<p><i>${ESCAPED}</i></p>`);
  assert.equal(markup`<p>${raw("<br>")}</p>`.toString(), "<p><br></p>");
  assert.ok(inner instanceof Markup);
});

Deno.test("lists are joined with each item escaped; false, true, null and undefined show nothing", () => {
  const items = ["<a>", markup`<b>${"<c>"}</b>`, ["<d>", 1]];
  assert.equal(markup`${items}`.toString(), "&#60;a&#62;<b>&#60;c&#62;</b>&#60;d&#62;1");
  const none = false;
  assert.equal(markup`[${none && EVIL}${true}${null}${undefined}]`.toString(), "[]");
  assert.equal(
    joinMarkup(["<x>", markup`<y>`], raw("<br>")).toString(),
    "&#60;x&#62;<br><y>",
  );
});
