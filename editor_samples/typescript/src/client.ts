/**
 * A runnable ACP client on the official SDK that spawns acp-bridge and shows a prompt turn the
 * way a reset-aware editor does.
 *
 *   node dist/src/client.js [--agent "acp-bridge"] [--cwd DIR] [--json] [--view FILE] PROMPT
 *
 * `--agent` is the agent's command line (default: `acp-bridge`), split on spaces; `--json`
 * prints the view JSON instead of text; `--view FILE` also writes the view JSON to FILE (the
 * kit's `grade-client` reads it). Permission prompts are answered "allow once"; file reads and
 * writes stay inside `--cwd`.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { ResetAwareView } from "./reducer.js";

type Options = { agent: string[]; cwd: string; json: boolean; viewFile: string | null; prompt: string };

function parseArgs(argv: string[]): Options {
  const options: Options = { agent: ["acp-bridge"], cwd: process.cwd(), json: false, viewFile: null, prompt: "" };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--agent") options.agent = argv[++i].split(" ").filter(Boolean);
    else if (arg === "--cwd") options.cwd = path.resolve(argv[++i]);
    else if (arg === "--json") options.json = true;
    else if (arg === "--view") options.viewFile = argv[++i];
    else rest.push(arg);
  }
  options.prompt = rest.join(" ");
  if (!options.prompt) throw new Error("usage: client.js [--agent CMD] [--cwd DIR] [--json] [--view FILE] PROMPT");
  return options;
}

function inside(root: string, file: string): string {
  const resolved = path.resolve(root, file);
  if (resolved !== root && !resolved.startsWith(root + path.sep)) {
    throw new acp.RequestError(-32602, `path outside the workspace: ${file}`);
  }
  return resolved;
}

export async function runPrompt(options: Options): Promise<{ view: ResetAwareView; error: string | null }> {
  const child = spawn(options.agent[0], options.agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const view = new ResetAwareView();
  let error: string | null = null;
  const app = acp
    .client({ name: "acp-bridge-typescript-sample" })
    .onNotification(acp.methods.client.session.update, (ctx) => view.update(ctx.params))
    .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
      view.permission(ctx.params);
      const allow = ctx.params.options.find((o) => o.kind === "allow_once");
      return allow
        ? { outcome: { outcome: "selected", optionId: allow.optionId } }
        : { outcome: { outcome: "cancelled" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async (ctx) => ({
      content: await readFile(inside(options.cwd, ctx.params.path), "utf8"),
    }))
    .onRequest(acp.methods.client.fs.writeTextFile, async (ctx) => {
      const target = inside(options.cwd, ctx.params.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, ctx.params.content, "utf8");
      return {};
    });
  try {
    await app.connectWith(stream, async (agent) => {
      await agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        clientInfo: { name: "acp-bridge-typescript-sample", version: "0.1.0" },
      });
      const session = await agent.request(acp.methods.agent.session.new, { cwd: options.cwd, mcpServers: [] });
      view.prompt(options.prompt);
      try {
        await agent.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: options.prompt }],
        });
      } catch (exc) {
        error = exc instanceof Error ? exc.message : String(exc);
      }
    });
  } finally {
    child.stdin.end();
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
  }
  return { view, error };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = parseArgs(process.argv.slice(2));
  const { view, error } = await runPrompt(options);
  const json = JSON.stringify(view.view());
  if (options.viewFile) await writeFile(options.viewFile, json + "\n", "utf8");
  process.stdout.write(options.json ? json + "\n" : view.render() + "\n");
  if (error) process.stderr.write(`error: ${error}\n`);
}
