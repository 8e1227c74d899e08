/**
 * Plays a recorded wire exchange through the official SDK's client side, so the reducer sees
 * exactly what an SDK-based editor's handlers see: the SDK parses each agent message with its
 * generated schemas and dispatches it to `onNotification` / `onRequest`.
 */
import * as acp from "@agentclientprotocol/sdk";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { ResetAwareView } from "./reducer.js";

export type WireItem = { from: "client" | "agent"; message: Record<string, any> };

const DISPATCH_LIMIT_MS = 10_000;

function promptText(params: { prompt?: { type: string; text?: string }[] }): string {
  return (params.prompt ?? []).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

export async function reduceWire(wire: WireItem[], view = new ResetAwareView()): Promise<ResetAwareView> {
  let controller!: ReadableStreamDefaultController<AnyMessage>;
  const readable = new ReadableStream<AnyMessage>({ start: (c) => void (controller = c) });
  const writable = new WritableStream<AnyMessage>({ write: () => undefined }); // our replies go nowhere
  let handled: (() => void) | null = null;
  const done = () => {
    const resolve = handled;
    handled = null;
    resolve?.();
  };
  const app = acp
    .client({ name: "acp-bridge-typescript-sample" })
    .onNotification(acp.methods.client.session.update, (ctx) => {
      view.update(ctx.params);
      done();
    })
    .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
      view.permission(ctx.params);
      done();
      const allow = ctx.params.options.find((o) => o.kind === "allow_once");
      return allow
        ? { outcome: { outcome: "selected", optionId: allow.optionId } }
        : { outcome: { outcome: "cancelled" } };
    });
  await app.connectWith({ readable, writable }, async () => {
    for (const item of wire) {
      const { method, params } = item.message;
      if (item.from === "client" && method === "session/prompt") {
        view.prompt(promptText(params));
      } else if (
        item.from === "agent" &&
        (method === "session/update" || method === "session/request_permission")
      ) {
        // Each message is dispatched before the next is fed: the reducer sees wire order.
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`the SDK did not dispatch ${method}: ${JSON.stringify(item.message)}`)),
            DISPATCH_LIMIT_MS,
          );
          handled = () => {
            clearTimeout(timer);
            resolve();
          };
          controller.enqueue(item.message as AnyMessage);
        });
      }
    }
  });
  return view; // connectWith closed the connection, and with it the stream, when the feed ended

}
