import * as assert from "node:assert/strict";
import plugin, { EXCEPTIONS, makePlugin, OUTPUT_MODULE } from "../../tools/lint_plugin.ts";

/** The rule ids `source`, read as the file at `path`, breaks. */
function broken(path: string, source: string): string[] {
  return Deno.lint.runPlugin(plugin, path, source).map((d) => d.id);
}

const DOC = "/**\n * Why it exists.\n *\n * @module\n */\n";

Deno.test("lint plugin: a file that breaks no rule passes", () => {
  const ok = `${DOC}export function f(a: number, b: number, c: number, d: number): number {
  return a + b + c + d;
}
class K {
  #store = 1;
  get store(): number {
    return this.#store;
  }
}
export { K };
`;
  assert.deepEqual(broken("src/runner/fine.ts", ok), []);
});

Deno.test("lint plugin: five parameters fail, in every kind of function", () => {
  const five = "a: 1, b: 2, c: 3, d: 4, e: 5";
  const cases = [
    `function f(${five}) {}`,
    `const f = function (${five}) {};`,
    `const f = (${five}) => {};`,
    `class K { m(${five}) {} }`,
    `class K { constructor(${five}) {} }`,
    `export function f(${five}): void;`,
  ];
  for (const c of cases) assert.deepEqual(broken("src/x.ts", DOC + c), ["wats/max-params"], c);
  // A `this` parameter is not one the caller passes.
  assert.deepEqual(broken("src/x.ts", `${DOC}function f(this: K, a: 1, b: 2, c: 3, d: 4) {}`), []);
});

Deno.test("lint plugin: a one-letter private field or method fails", () => {
  for (const c of ["class K { #o = 1; }", "class K { #s() {} }", "class K { private o = 1; }"]) {
    assert.deepEqual(broken("src/x.ts", DOC + c), ["wats/no-one-letter-private"], c);
  }
  assert.deepEqual(broken("src/x.ts", `${DOC}class K { o = 1; #ok = 2; }`), []);
});

Deno.test("lint plugin: console only in the CLI's output module", () => {
  const src = `${DOC}export function f(): void {\n  console.log("x");\n}\n`;
  assert.deepEqual(broken("src/cli/agent.ts", src), ["wats/no-console"]);
  assert.deepEqual(broken("src/node/daemon.ts", src), ["wats/no-console"]);
  assert.deepEqual(broken(OUTPUT_MODULE, src), []);
  // Tests and benches print.
  assert.deepEqual(broken("bench/x.ts", src), []);
});

Deno.test("lint plugin: only main.ts exits", () => {
  const src = `${DOC}Deno.exit(1);\n`;
  assert.deepEqual(broken("src/cli/launcher.ts", src), ["wats/no-exit"]);
  assert.deepEqual(broken("main.ts", src), []);
});

Deno.test("lint plugin: exports are named", () => {
  assert.deepEqual(broken("src/x.ts", `${DOC}export * from "./y.ts";\n`), ["wats/no-export-star"]);
  assert.deepEqual(broken("src/x.ts", `${DOC}export { y } from "./y.ts";\n`), []);
});

Deno.test("lint plugin: a file under src/ opens with a module doc", () => {
  const body = "export const x = 1;\n";
  assert.deepEqual(broken("src/x.ts", body), ["wats/module-doc"]);
  assert.deepEqual(broken("src/x.ts", `// a line comment\n${body}`), ["wats/module-doc"]);
  assert.deepEqual(broken("src/x.ts", `/** No module tag. */\n${body}`), ["wats/module-doc"]);
  // A doc after the first statement is a function's, not the module's.
  assert.deepEqual(broken("src/x.ts", `${body}${DOC}`), ["wats/module-doc"]);
  assert.deepEqual(broken("src/x.ts", DOC + body), []);
  assert.deepEqual(broken("tests/x_test.ts", body), []);
});

Deno.test("lint plugin: file names are snake_case, never index", () => {
  assert.deepEqual(broken("src/runner/loopDetector.ts", DOC), ["wats/file-name"]);
  assert.deepEqual(broken("src/runner/index.ts", DOC), ["wats/file-name"]);
  assert.deepEqual(broken("src/runner/loop-detector.ts", DOC), ["wats/file-name"]);
  assert.deepEqual(broken("src/runner/loop_detector.ts", DOC), []);
});

Deno.test("lint plugin: every waiver still waives a violation (the list only shrinks)", () => {
  const root = new URL("../../", import.meta.url);
  for (const [rule, entries] of Object.entries(EXCEPTIONS)) {
    assert.ok(rule in plugin.rules, `EXCEPTIONS names no rule ${rule}`);
    for (const entry of entries) {
      const path = entry.slice(0, entry.indexOf(":"));
      const file = new URL(path, root);
      const source = Deno.readTextFileSync(file);
      const count = (p: Deno.lint.Plugin) =>
        Deno.lint.runPlugin(p, file.pathname, source).filter((d) => d.id === `wats/${rule}`)
          .length;
      const without = { ...EXCEPTIONS, [rule]: entries.filter((e) => e !== entry) };
      assert.ok(
        count(makePlugin(without)) > count(plugin),
        `${rule}: ${entry} is waived but breaks nothing: remove it from EXCEPTIONS`,
      );
    }
  }
});
