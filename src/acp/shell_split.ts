/**
 * Splits a shell command into the simple commands a shell would run, so that
 * the policy can judge each one (docs/acp.md "Rules for commands"): `;`, `&&`,
 * `||`, `|`, `&` and newlines separate commands; `$(…)`, backticks and
 * `<(…)`/`>(…)` are commands of their own (their text in the outer command
 * becomes `$(…)`); a file redirection is a part of its own (`> out.txt`,
 * `< in.txt`). Quotes and backslashes are removed from words as a shell would.
 *
 * Conservative: what this cannot split with certainty (an unbalanced quote, a
 * here-document, a substitution inside `${…}`) is `null`, and the policy then
 * lets no rule with a pattern allow it. The OS sandbox, not this splitter, is
 * the boundary (docs/decisions/sandbox.md); the splitter makes rules such as
 * `claude/execute(git commit *)` mean what they say.
 *
 * @module
 */

/** Reserved words that only shape control flow; a part that starts with one is judged without it. */
const KEYWORDS = new Set(["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!"]);

/** Redirection targets that read or write nothing. */
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"]);

/** How deep substitutions may nest before the command counts as unsplittable. */
const MAX_DEPTH = 16;

/** One simple command (its words) or one redirection (`["<op>", target]`). */
export type CommandPart = string[];

class Unsplittable extends Error {}

/**
 * The simple commands and redirections of `command`, each as its words; `null`
 * when it cannot be split with certainty.
 */
export function splitCommand(command: string): CommandPart[] | null {
  try {
    const parts: CommandPart[] = [];
    new Splitter(command, parts, 0).run();
    return parts;
  } catch (err) {
    if (err instanceof Unsplittable) return null;
    throw err;
  }
}

/** A part as rules see it: its words joined by single spaces. */
export function partText(part: CommandPart): string {
  return part.join(" ");
}

class Splitter {
  /** The command line being split. */
  #text: string;
  /** Where in `#text` reading goes on. */
  #pos = 0;
  #out: CommandPart[];
  #depth: number;
  /** The words of the simple command being read. */
  #words: string[] = [];
  /** The word being read; undefined between words. */
  #word: string | undefined;
  /** A redirection operator waiting for its target. */
  #redirect: string | undefined;
  /** The file redirections of the simple command being read. */
  #files: CommandPart[] = [];

  constructor(s: string, out: CommandPart[], depth: number) {
    if (depth > MAX_DEPTH) throw new Unsplittable();
    this.#text = s;
    this.#out = out;
    this.#depth = depth;
  }

  run(): void {
    const s = this.#text;
    while (this.#pos < s.length) {
      const c = s.charAt(this.#pos);
      if (c === " " || c === "\t") {
        this.#endWord();
        this.#pos++;
      } else if (c === "\n" || c === ";" || c === "(" || c === ")") {
        this.#endCommand();
        this.#pos++;
      } else if (c === "&" || c === "|") {
        if (c === "&" && s[this.#pos + 1] === ">") {
          this.#readRedirect();
          continue;
        }
        this.#endCommand();
        this.#pos += s[this.#pos + 1] === c || (c === "|" && s[this.#pos + 1] === "&") ? 2 : 1;
      } else if ((c === "<" || c === ">") && s[this.#pos + 1] === "(") {
        this.#append("$(…)");
        this.#substitution(this.#pos + 2, ")");
      } else if (c === "<" || c === ">") {
        this.#readRedirect();
      } else if (c === "#" && this.#word === undefined) {
        while (this.#pos < s.length && s[this.#pos] !== "\n") this.#pos++;
      } else if (c === "'") {
        const end = s.indexOf("'", this.#pos + 1);
        if (end < 0) throw new Unsplittable();
        this.#append(s.slice(this.#pos + 1, end));
        this.#pos = end + 1;
      } else if (c === '"') {
        this.#doubleQuoted();
      } else if (c === "\\") {
        if (this.#pos + 1 >= s.length) throw new Unsplittable();
        if (s[this.#pos + 1] !== "\n") this.#append(s.charAt(this.#pos + 1));
        this.#pos += 2;
      } else if (c === "$" || c === "`") {
        this.#dollarOrBacktick();
      } else {
        // A digit right before a redirection is its file descriptor, not a word.
        if (/[0-9]/.test(c) && this.#word === undefined && /^[0-9]+[<>]/.test(s.slice(this.#pos))) {
          while (/[0-9]/.test(s.charAt(this.#pos))) this.#pos++;
          continue;
        }
        this.#append(c);
        this.#pos++;
      }
    }
    this.#endCommand();
  }

  #append(text: string): void {
    this.#word = (this.#word ?? "") + text;
  }

  #endWord(): void {
    if (this.#word === undefined) return;
    const word = this.#word;
    this.#word = undefined;
    if (this.#redirect !== undefined) {
      const op = this.#redirect;
      this.#redirect = undefined;
      if (!HARMLESS_TARGETS.has(word)) this.#files.push([op, word]);
      return;
    }
    this.#words.push(word);
  }

  #endCommand(): void {
    this.#endWord();
    if (this.#redirect !== undefined) throw new Unsplittable();
    let words = this.#words;
    this.#words = [];
    const lead = words.findIndex((w) => !KEYWORDS.has(w) && w !== "{" && w !== "}");
    words = lead < 0 ? [] : words.slice(lead);
    if (words.length > 0 && words[words.length - 1] === "}") words = words.slice(0, -1);
    if (words.length > 0) this.#out.push(words);
    this.#out.push(...this.#files);
    this.#files = [];
  }

  /** Reads `>`, `>>`, `>|`, `<`, `<>`, `&>`, `&>>`, `>&N`, `<&N`; here-documents are unsplittable. */
  #readRedirect(): void {
    this.#endWord();
    const s = this.#text;
    const m = /^(&>>|&>|>>|>\||<>|<<<|<<|>&|<&|>|<)/.exec(s.slice(this.#pos))!;
    const op = m[0];
    this.#pos += op.length;
    if (op === "<<") throw new Unsplittable();
    if (op === ">&" || op === "<&") {
      // A duplicated or closed descriptor (`2>&1`, `>&-`) names no file.
      const fd = /^\s*([0-9]+|-)/.exec(s.slice(this.#pos));
      if (fd) {
        this.#pos += fd[0].length;
        return;
      }
    }
    if (op === "<<<") {
      // A here-string is data on stdin, not a file.
      this.#redirect = undefined;
      this.#skipWord();
      return;
    }
    this.#redirect = op.startsWith("<") ? "<" : op.endsWith(">>") ? ">>" : ">";
    while (s[this.#pos] === " " || s[this.#pos] === "\t") this.#pos++;
  }

  /** Skips one word (a here-string's text), substitutions in it still judged. */
  #skipWord(): void {
    const words = this.#words;
    this.#words = [];
    while (this.#text[this.#pos] === " " || this.#text[this.#pos] === "\t") this.#pos++;
    const start = this.#pos;
    const s = this.#text;
    while (this.#pos < s.length && !" \t\n;&|()<>".includes(s.charAt(this.#pos))) {
      const c = s.charAt(this.#pos);
      if (c === "'" || c === '"' || c === "\\" || c === "$" || c === "`") {
        if (c === "'") {
          const end = s.indexOf("'", this.#pos + 1);
          if (end < 0) throw new Unsplittable();
          this.#pos = end + 1;
        } else if (c === '"') this.#doubleQuoted();
        else if (c === "\\") this.#pos += 2;
        else this.#dollarOrBacktick();
      } else this.#pos++;
    }
    if (this.#pos === start) throw new Unsplittable();
    this.#word = undefined;
    this.#words = words;
  }

  #doubleQuoted(): void {
    const s = this.#text;
    this.#pos++;
    this.#append("");
    while (true) {
      if (this.#pos >= s.length) throw new Unsplittable();
      const c = s.charAt(this.#pos);
      if (c === '"') {
        this.#pos++;
        return;
      }
      if (c === "\\" && '"$`\\\n'.includes(s[this.#pos + 1] ?? "")) {
        if (s[this.#pos + 1] !== "\n") this.#append(s.charAt(this.#pos + 1));
        this.#pos += 2;
      } else if (c === "$" || c === "`") {
        this.#dollarOrBacktick();
      } else {
        this.#append(c);
        this.#pos++;
      }
    }
  }

  #dollarOrBacktick(): void {
    const s = this.#text;
    if (s[this.#pos] === "`") {
      this.#append("$(…)");
      this.#substitution(this.#pos + 1, "`");
    } else if (s.startsWith("$((", this.#pos)) {
      // Arithmetic: its text may still hold a command substitution.
      const end = matching(s, this.#pos + 1, "(", ")");
      if (/[`]|\$\(/.test(s.slice(this.#pos + 3, end))) throw new Unsplittable();
      this.#append(s.slice(this.#pos, end + 1));
      this.#pos = end + 1;
    } else if (s[this.#pos + 1] === "(") {
      this.#append("$(…)");
      this.#substitution(this.#pos + 2, ")");
    } else if (s[this.#pos + 1] === "{") {
      const end = matching(s, this.#pos + 1, "{", "}");
      const inner = s.slice(this.#pos + 2, end);
      if (/[`]|\$\(|<\(|>\(/.test(inner)) throw new Unsplittable();
      this.#append(s.slice(this.#pos, end + 1));
      this.#pos = end + 1;
    } else {
      this.#append("$");
      this.#pos++;
    }
  }

  /** Splits the substitution starting at `from` as commands of their own. */
  #substitution(from: number, close: ")" | "`"): void {
    const s = this.#text;
    const end = close === "`" ? closingBacktick(s, from) : matching(s, from - 1, "(", ")");
    const inner = s.slice(from, end);
    new Splitter(close === "`" ? inner.replace(/\\`/g, "`") : inner, this.#out, this.#depth + 1)
      .run();
    this.#pos = end + 1;
  }
}

function closingBacktick(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "`") return i;
  }
  throw new Unsplittable();
}

/** The index of the bracket closing the one at `open`, skipping quoted text and nested pairs. */
function matching(s: string, open: number, left: string, right: string): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "'") {
      i = s.indexOf("'", i + 1);
      if (i < 0) break;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === "\\") i++;
      if (i >= s.length) break;
    } else if (c === left) depth++;
    else if (c === right && --depth === 0) return i;
  }
  throw new Unsplittable();
}

/** The command of an `execute` request's `rawInput`: Claude sends a string, Codex an argv. */
export function commandOf(rawInput: unknown): string | undefined {
  if (rawInput === null || typeof rawInput !== "object") return undefined;
  const command = (rawInput as { command?: unknown }).command;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((w) => typeof w === "string")) {
    const argv = command as string[];
    // `bash -lc SCRIPT` (Codex's form): the script is what runs.
    const [shell = "", flag = "", script = ""] = argv;
    if (argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(shell) && /^-l?c$/.test(flag)) {
      return script;
    }
    return argv.map(shellQuote).join(" ");
  }
  return undefined;
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
