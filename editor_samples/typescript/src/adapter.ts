/**
 * The conformance adapter (spec/editor-conformance.md section 6.2): the scenario's wire as
 * NDJSON on stdin, the view JSON on stdout.
 *
 *   acp-bridge conformance grade-reducer -- node editor_samples/typescript/dist/src/adapter.js
 */
import { reduceWire, type WireItem } from "./sdk-feed.js";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const wire = (await readStdin())
  .split("\n")
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line) as WireItem);
const view = await reduceWire(wire);
process.stdout.write(JSON.stringify(view.view()) + "\n");
