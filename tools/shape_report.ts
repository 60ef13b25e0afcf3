/**
 * The code's shape in numbers, for issue closing notes: the largest file and the largest
 * function under src/, the functions that take 5 parameters or more, and the private fields of
 * one-letter name. `deno test -R tools/shape_report.ts -- [root]` (root: this checkout; `Deno.lint.runPlugin`
 * runs only under `deno test`).
 *
 * @module
 */

import { MAX_PARAMS } from "./lint_plugin.ts";

const root = new URL(
  Deno.args[0] ? `file://${Deno.args[0].replace(/\/?$/, "/")}` : "../",
  import.meta.url,
);

/** Every .ts file under `dir` of `root`. */
function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(new URL(dir, root))) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...files(p));
    else if (e.isFile && p.endsWith(".ts")) out.push(p);
  }
  return out;
}

interface Fn {
  file: string;
  name: string;
  lines: number;
  params: number;
}

const found: Fn[] = [];
let current = "";
const lineOf = (text: string) => (offset: number) => text.slice(0, offset).split("\n").length;
let at: (offset: number) => number = () => 0;

const measure: Deno.lint.Plugin = {
  name: "shape",
  rules: {
    fn: {
      create() {
        const take = (
          node:
            | Deno.lint.FunctionDeclaration
            | Deno.lint.FunctionExpression
            | Deno.lint.ArrowFunctionExpression,
        ) => {
          const parent = node.parent as Deno.lint.Node;
          const name = node.type !== "ArrowFunctionExpression" && node.id
            ? node.id.name
            : parent.type === "VariableDeclarator" && parent.id.type === "Identifier"
            ? parent.id.name
            : parent.type === "MethodDefinition" && parent.key.type !== "Literal"
            ? ("name" in parent.key ? String(parent.key.name) : "<method>")
            : "<anonymous>";
          const params = node.params.filter((p) => !(p.type === "Identifier" && p.name === "this"))
            .length;
          found.push({
            file: current,
            name,
            lines: at(node.range[1]) - at(node.range[0]) + 1,
            params,
          });
        };
        return {
          FunctionDeclaration: take,
          FunctionExpression: take,
          ArrowFunctionExpression: take,
        };
      },
    },
  },
};

let largestFile = { file: "", lines: 0 };
let oneLetter = 0;
for (const file of files("src")) {
  const text = Deno.readTextFileSync(new URL(file, root));
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > largestFile.lines) largestFile = { file, lines };
  oneLetter += [...text.matchAll(/^\s*(?:readonly\s+)?#[a-zA-Z]\b(?!\()/gm)].length;
  current = file;
  at = lineOf(text);
  Deno.lint.runPlugin(measure, file, text);
}
const largestFn = found.reduce((a, b) => b.lines > a.lines ? b : a);
const many = found.filter((f) => f.params > MAX_PARAMS);
console.log(`largest file: ${largestFile.file} (${largestFile.lines} lines)`);
console.log(`largest function: ${largestFn.file} ${largestFn.name} (${largestFn.lines} lines)`);
console.log(`functions with ≥ ${MAX_PARAMS + 1} parameters: ${many.length}`);
for (const f of many) console.log(`  ${f.file}:${f.name} (${f.params})`);
console.log(`one-letter private fields: ${oneLetter}`);
