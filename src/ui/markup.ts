/**
 * HTML from templates that escape by default: the dashboard shows text from
 * other nodes, agents and coding agents, so a value is text unless the code
 * says otherwise. `markup` escapes every interpolated value; a fragment built
 * by `markup` (or marked with `raw` when the program wrote it) goes in as it
 * is. The model is the `html` helper of honojs/hono: arrays are joined, and
 * `false`, `true`, `null` and `undefined` render nothing, so
 * `${cond && markup`…`}` reads as it should.
 *
 * Named `markup`, not `html`: deno fmt formats a template tagged `html` as
 * embedded HTML and, when a line is long, re-indents it, which would change
 * the text of the pages (whitespace in `<pre>`, between inline elements).
 *
 * @module
 */

/**
 * Markup this program vouches for: it is inserted as it is, never escaped
 * again. Made by `markup` and `raw` only.
 */
export class Markup {
  readonly #text: string;

  /** Use `markup` or `raw`: a constructor call hides that the text is trusted. */
  constructor(text: string) {
    this.#text = text;
  }

  /** The markup, as the HTTP response sends it. */
  toString(): string {
    return this.#text;
  }
}

/** What a template may interpolate: text (escaped), markup, and lists of either. */
export type MarkupValue =
  | Markup
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly MarkupValue[];

/** Escapes text for HTML content and attribute values. */
function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(v: MarkupValue): string {
  if (v instanceof Markup) return v.toString();
  if (v === null || v === undefined || typeof v === "boolean") return "";
  if (typeof v === "string") return escapeText(v);
  if (typeof v === "number") return String(v);
  return v.map(render).join("");
}

/** A tagged template: the literal parts are markup, every value is escaped unless it is `Markup`. */
export function markup(strings: TemplateStringsArray, ...values: MarkupValue[]): Markup {
  // A template has one more literal part than values.
  let out = strings[0] ?? "";
  for (const [i, v] of values.entries()) out += render(v) + (strings[i + 1] ?? "");
  return new Markup(out);
}

/**
 * Marks markup this program wrote as trusted (a constant, JSON made safe for
 * a `<script>` block). Never pass it text that came from outside.
 */
export function raw(text: string): Markup {
  return new Markup(text);
}

/** The items, each escaped unless it is `Markup`, with `separator` between them. */
export function joinMarkup(items: readonly MarkupValue[], separator: Markup): Markup {
  return new Markup(items.map(render).join(separator.toString()));
}
