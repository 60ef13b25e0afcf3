/**
 * wats's own lint rules, in the style of denoland/std's `_tools/lint_plugin.ts`: the shapes
 * /work/shared/STYLE.md and docs/architecture.md §8 describe, checked by `deno lint` (and so by
 * `deno task static` and `deno task check`) instead of by a reviewer's eye.
 *
 * - `wats/max-params`: a function takes at most 4 parameters; more go in an options object,
 *   whose names cannot be swapped unnoticed (`summary(a, b, c, d, e, …)` could).
 * - `wats/no-one-letter-private`: a class's private field or method has a name a reader can
 *   search for (`#o` is not one).
 * - `wats/no-console`: under src/, only the CLI's output module ({@linkcode OUTPUT_MODULE})
 *   writes to the console; everything else is handed a logger, an event sink or a writer
 *   (docs/architecture.md §8, "the world is injected").
 * - `wats/no-exit`: under src/, nothing calls `Deno.exit`: only main.ts exits (§2).
 * - `wats/no-export-star`: exports are named (`export * from` hides what a module offers).
 * - `wats/module-doc`: every file under src/ opens with a module doc (`@module`) that says why
 *   it exists.
 * - `wats/file-name`: files are `snake_case`, and there is no `index.ts`.
 *
 * {@linkcode EXCEPTIONS} lists the places a rule is known to fail today and is waived until
 * they are fixed; a waiver that no longer matches anything is an error too, so the list only
 * shrinks.
 *
 * @module
 */

/** The one module under src/ that may write to the console: the CLI's output. */
export const OUTPUT_MODULE = "src/cli/output.ts";

/** The most parameters a function takes. */
export const MAX_PARAMS = 4;

/**
 * Known violations, waived by `rule → ["path:function", …]` until they are fixed. Empty since
 * issue 28's merges: a new waiver is a debt with an owner, and a test fails once it waives nothing.
 */
export const EXCEPTIONS: Readonly<Record<string, readonly string[]>> = {
  "max-params": [],
  "no-one-letter-private": [],
  "no-console": [],
};

/** The repository root, with a trailing slash (this file is `<root>/tools/lint_plugin.ts`). */
const ROOT = new URL("../", import.meta.url).pathname;

/** `filename` relative to the repository root (tests pass relative names already). */
export function relativePath(filename: string): string {
  const f = filename.replaceAll("\\", "/");
  return f.startsWith(ROOT) ? f.slice(ROOT.length) : f.replace(/^\.?\//, "");
}

type Context = Deno.lint.RuleContext;
type Node = Deno.lint.Node;
/** A node with its parent (every node but the program). */
type Child = Exclude<Node, Deno.lint.Program | Deno.lint.LineComment | Deno.lint.BlockComment>;
type FunctionNode =
  | Deno.lint.FunctionDeclaration
  | Deno.lint.FunctionExpression
  | Deno.lint.ArrowFunctionExpression
  | Deno.lint.TSDeclareFunction;

/** Waivers by rule, as {@linkcode EXCEPTIONS}. */
export type Waivers = Readonly<Record<string, readonly string[]>>;

/** One finding: the rule, the function (or `<module>`) it names, where, and what to say. */
interface Finding {
  rule: string;
  name: string;
  node: Node;
  message: string;
  hint: string;
}

/** Reports a finding unless it is waived. */
type Reporter = (ctx: Context, finding: Finding) => void;

/** A reporter that skips what `waivers` waive (`path:name` under the rule). */
function reporter(waivers: Waivers): Reporter {
  return (ctx, f) => {
    const path = relativePath(ctx.filename);
    if (waivers[f.rule]?.includes(`${path}:${f.name}`)) return;
    ctx.report({ node: f.node, message: f.message, hint: f.hint });
  };
}

function parentOf(node: Node): Node | undefined {
  return node.type === "Program" ? undefined : (node as Child).parent as Node;
}

/** The name a reader knows a function by: its own, its variable's, its key's; else `<anonymous>`. */
export function functionName(node: FunctionNode): string {
  if (node.type !== "ArrowFunctionExpression" && node.id) return node.id.name;
  const parent = parentOf(node);
  if (parent?.type === "VariableDeclarator" && parent.id.type === "Identifier") {
    return parent.id.name;
  }
  if (
    parent?.type === "MethodDefinition" || parent?.type === "Property" ||
    parent?.type === "PropertyDefinition"
  ) {
    const key = parent.key;
    if (key.type === "Identifier" || key.type === "PrivateIdentifier") {
      const owner = parent.type === "MethodDefinition" ? className(parent) : undefined;
      const name = key.type === "PrivateIdentifier" ? `#${key.name}` : key.name;
      return owner ? `${owner}.${name}` : name;
    }
  }
  return "<anonymous>";
}

/** The name of the class a member is defined in, if it has one. */
function className(member: Node): string | undefined {
  const body = parentOf(member);
  const cls = body && parentOf(body);
  if (cls && (cls.type === "ClassDeclaration" || cls.type === "ClassExpression") && cls.id) {
    return cls.id.name;
  }
  return undefined;
}

/** The name of the named function `node` is in, or `<module>`. */
function enclosingFunction(node: Node): string {
  for (let n = parentOf(node); n; n = parentOf(n)) {
    if (
      n.type === "FunctionDeclaration" || n.type === "FunctionExpression" ||
      n.type === "ArrowFunctionExpression"
    ) {
      const name = functionName(n);
      if (name !== "<anonymous>") return name;
    }
  }
  return "<module>";
}

/** The parameters a caller passes (a TypeScript `this` parameter is not one). */
function paramCount(params: readonly Deno.lint.Parameter[]): number {
  return params.filter((p) => !(p.type === "Identifier" && p.name === "this")).length;
}

function maxParams(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      const check = (node: FunctionNode) => {
        const n = paramCount(node.params);
        if (n <= MAX_PARAMS) return;
        const name = functionName(node);
        report(ctx, {
          rule: "max-params",
          name,
          node,
          message: `${name} takes ${n} parameters; at most ${MAX_PARAMS}`,
          hint: "Pass the rest in one options object with named fields, so no two can be " +
            "swapped unnoticed.",
        });
      };
      return {
        FunctionDeclaration: check,
        FunctionExpression: check,
        ArrowFunctionExpression: check,
        TSDeclareFunction: check,
      };
    },
  };
}

function noOneLetterPrivate(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      const check = (node: Deno.lint.PropertyDefinition | Deno.lint.MethodDefinition) => {
        const key = node.key;
        const isPrivate = key.type === "PrivateIdentifier" ||
          (node.accessibility === "private" && key.type === "Identifier");
        if (!isPrivate || key.name.length > 1) return;
        const owner = className(node) ?? "<class>";
        report(ctx, {
          rule: "no-one-letter-private",
          name: `${owner}.#${key.name}`,
          node: key,
          message: `${owner}'s private member #${key.name} has a one-letter name`,
          hint: "Name it for what it holds (#options, #store), so a reader can search for it.",
        });
      };
      return { PropertyDefinition: check, MethodDefinition: check };
    },
  };
}

function noConsole(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      const path = relativePath(ctx.filename);
      if (!path.startsWith("src/") || path === OUTPUT_MODULE) return {};
      return {
        MemberExpression(node) {
          if (node.object.type !== "Identifier" || node.object.name !== "console") return;
          const name = enclosingFunction(node);
          report(ctx, {
            rule: "no-console",
            name,
            node,
            message: `${name} uses console outside ${OUTPUT_MODULE}`,
            hint: `A command writes through ${OUTPUT_MODULE}; other code takes a logger, an ` +
              "event sink or a writer (docs/architecture.md §8).",
          });
        },
      };
    },
  };
}

function noExit(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      if (!relativePath(ctx.filename).startsWith("src/")) return {};
      return {
        MemberExpression(node) {
          if (
            node.object.type !== "Identifier" || node.object.name !== "Deno" ||
            node.property.type !== "Identifier" || node.property.name !== "exit"
          ) return;
          report(ctx, {
            rule: "no-exit",
            name: enclosingFunction(node),
            node,
            message: "Deno.exit is called under src/; only main.ts exits",
            hint: "Return an exit code or throw a domain error (src/errors.ts); the launcher " +
              "prints it.",
          });
        },
      };
    },
  };
}

function noExportStar(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      return {
        ExportAllDeclaration(node) {
          report(ctx, {
            rule: "no-export-star",
            name: String(node.source.value),
            node,
            message: `export * from "${node.source.value}" hides what this module offers`,
            hint: "Name each export (`export { a, type B } from …`).",
          });
        },
      };
    },
  };
}

function moduleDoc(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      const path = relativePath(ctx.filename);
      if (!path.startsWith("src/") || !/\.tsx?$/.test(path)) return {};
      return {
        Program(node) {
          const first = ctx.sourceCode.getAllComments()[0];
          const documented = first !== undefined && first.type === "Block" &&
            first.value.startsWith("*") && first.value.includes("@module") &&
            node.body.every((s) => s.range[0] >= first.range[1]);
          if (documented) return;
          report(ctx, {
            rule: "module-doc",
            name: "<module>",
            node,
            message: `${path} has no module doc`,
            hint: "Open the file with /** … @module */ saying why it exists (STYLE.md rule 8).",
          });
        },
      };
    },
  };
}

function fileName(report: Reporter): Deno.lint.Rule {
  return {
    create(ctx) {
      const path = relativePath(ctx.filename);
      const base = path.slice(path.lastIndexOf("/") + 1);
      return {
        Program(node) {
          const bad = /^index\.[jt]sx?$/.test(base)
            ? "an index file says nothing of what it holds"
            : /^[a-z0-9_]+(\.[a-z0-9]+)+$/.test(base)
            ? undefined
            : "file names are snake_case";
          if (bad === undefined) return;
          report(ctx, {
            rule: "file-name",
            name: "<module>",
            node,
            message: `${base}: ${bad}`,
            hint: "Name the file for the one thing it does, in snake_case (loop_detector.ts).",
          });
        },
      };
    },
  };
}

/** The plugin with `waivers` waived. */
export function makePlugin(waivers: Waivers): Deno.lint.Plugin {
  const report = reporter(waivers);
  return {
    name: "wats",
    rules: {
      "max-params": maxParams(report),
      "no-one-letter-private": noOneLetterPrivate(report),
      "no-console": noConsole(report),
      "no-exit": noExit(report),
      "no-export-star": noExportStar(report),
      "module-doc": moduleDoc(report),
      "file-name": fileName(report),
    },
  };
}

/** The plugin `deno lint` loads (deno.json `lint.plugins`), with today's waivers. */
export default makePlugin(EXCEPTIONS);
