/**
 * A Worker that tries operations and reports, for each, "ok" or the error's
 * name. Started by permissions_test.ts with a command's permission set.
 */

/** One operation to try. */
export type Probe =
  | { op: "read"; path: string }
  | { op: "write"; path: string }
  | { op: "mkdir"; path: string }
  | { op: "run"; cmd: string }
  | { op: "connect"; path: string }
  | { op: "listen"; path: string }
  | { op: "tcp"; hostname: string; port: number }
  | { op: "tcp-listen"; hostname: string; port: number }
  | { op: "env"; name: string }
  | { op: "uid" };

async function attempt(p: Probe): Promise<string> {
  try {
    switch (p.op) {
      case "read":
        await Deno.readFile(p.path);
        break;
      case "write":
        await Deno.writeTextFile(p.path, "probe\n", { append: true });
        break;
      case "mkdir":
        await Deno.mkdir(p.path, { recursive: true });
        break;
      case "run":
        await new Deno.Command(p.cmd, { args: ["--version"], stdout: "null", stderr: "null" })
          .output();
        break;
      case "connect":
        (await Deno.connect({ transport: "unix", path: p.path })).close();
        break;
      case "listen":
        Deno.listen({ transport: "unix", path: p.path }).close();
        break;
      case "tcp":
        (await Deno.connect({ hostname: p.hostname, port: p.port })).close();
        break;
      case "tcp-listen":
        Deno.listen({ hostname: p.hostname, port: p.port }).close();
        break;
      case "env":
        Deno.env.get(p.name);
        break;
      case "uid":
        Deno.uid();
        break;
    }
    return "ok";
  } catch (err) {
    return (err as Error).name;
  }
}

const scope = self as unknown as {
  onmessage: (e: MessageEvent<Probe[]>) => void;
  postMessage(m: string[]): void;
};
scope.onmessage = async (e) => {
  const results: string[] = [];
  for (const p of e.data) results.push(await attempt(p));
  scope.postMessage(results);
};
