import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { runPrompt } from "../src/client.js";
import { ResetAwareView } from "../src/reducer.js";
import { reduceWire, type WireItem } from "../src/sdk-feed.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const KIT = path.resolve(here, "../../../../spec/conformance");

type Fixture = { name: string; wire: WireItem[]; expected: Record<string, any[]> };

function project(field: string, items: any[]): unknown[] {
  if (field === "toolCalls") return items.map((t) => ({ title: t.title, status: t.status }));
  if (field === "permissionPrompts") return items.map((p) => ({ title: p.title }));
  return items;
}

function chunk(text: string, messageId: string, meta?: Record<string, unknown>): SessionNotification {
  const update: any = { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId };
  if (meta) update._meta = meta;
  return { sessionId: "s", update };
}

test("every conformance fixture: the SDK-fed reducer shows exactly the expected view", async () => {
  const names = readdirSync(KIT).filter((n) => n.endsWith(".json"));
  assert.ok(names.length >= 18, `fixtures in ${KIT}`);
  for (const name of names) {
    const fixture = JSON.parse(readFileSync(path.join(KIT, name), "utf8")) as Fixture;
    const view = (await reduceWire(fixture.wire)).view() as unknown as Record<string, any[]>;
    for (const field of ["messages", "thoughts", "toolCalls", "permissionPrompts", "retries"]) {
      assert.deepEqual(project(field, view[field]), project(field, fixture.expected[field]), `${fixture.name}: ${field}`);
    }
  }
});

test("a marker in the second model call keeps the first call's text and the tool call (EDITOR-003)", () => {
  const view = new ResetAwareView();
  view.prompt("go");
  view.update(chunk("Let me read the file. ", "m1-a1"));
  view.update({ sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a", status: "pending" } });
  view.update({ sessionId: "s", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" } });
  view.update(chunk("The file defi", "m2-a1"));
  view.update(chunk("", "m2-a2", { reset: true, attempt: 2, reason: "stream_interrupted", unknown: 1 }));
  view.update(chunk("The file defines two classes.", "m2-a2"));
  assert.deepEqual(view.view().messages, [
    { role: "user", text: "go" },
    { role: "agent", text: "Let me read the file. " },
    { role: "agent", text: "The file defines two classes." },
  ]);
  assert.deepEqual(view.view().toolCalls, [{ toolCallId: "t1", title: "Read a", status: "completed" }]);
});

test("the give-up marker discards the failed attempt's text (RESET-010, EDITOR-011)", () => {
  const view = new ResetAwareView();
  view.prompt("go");
  view.update(chunk("Half an ans", "m1-a4"));
  view.update(chunk("", "m1-a4", { reset: true, attempt: 4, reason: "gave_up", fault: "stream_interrupted" }));
  assert.deepEqual(view.view().messages, [{ role: "user", text: "go" }]);
  assert.match(view.render(), /gave up after attempt 4/);
});

function bridgeCommand(): string[] | null {
  const configured = process.env.ACP_BRIDGE_COMMAND;
  if (configured) return configured.split(" ").filter(Boolean);
  try {
    execFileSync("acp-bridge", ["--version"], { stdio: "ignore" });
    return ["acp-bridge"];
  } catch {
    return null;
  }
}

const bridge = bridgeCommand();

test(
  "the client example spawns acp-bridge and shows a retried turn once",
  { skip: bridge ? false : "acp-bridge is not on PATH and ACP_BRIDGE_COMMAND is unset (pip install acp-bridge)" },
  async () => {
    const root = mkdtempSync(path.join(tmpdir(), "acp-ts-"));
    writeFileSync(path.join(root, "README.md"), "# test\n");
    const agent = [...bridge!, "--state-dir", path.join(root, ".state")];
    const { view, error } = await runPrompt({ agent, cwd: root, json: true, viewFile: null, prompt: "/tool-call-then-break" });
    assert.equal(error, null);
    const shown = view.view();
    assert.deepEqual(shown.messages.map((m) => m.text), ["/tool-call-then-break", "Creating a file. ", "Created then-break.txt."]);
    assert.deepEqual(shown.toolCalls.map((t) => [t.title, t.status]), [["Write then-break.txt", "completed"]]);
    assert.equal(shown.permissionPrompts.length, 1);
    assert.equal(readFileSync(path.join(root, "then-break.txt"), "utf8").length > 0, true);
  },
);
