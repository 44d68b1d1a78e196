// Usage: node anthropic.mjs <base URL>. A plain and a streamed message
// through the official @anthropic-ai/sdk (its raw event stream and its
// MessageStream helper), with retries off so that each call is exactly one
// request.
import { sdk, report } from "./load.mjs";

const Anthropic = sdk("@anthropic-ai/sdk");
const client = new Anthropic({ baseURL: process.argv[2], apiKey: "gate-dummy-key", maxRetries: 0 });

const plain = await client.messages.create({
  model: "m",
  max_tokens: 64,
  messages: [{ role: "user", content: "write a haiku" }],
});

const events = [];
let text = "";
const raw = await client.messages.create({
  model: "m",
  max_tokens: 64,
  messages: [{ role: "user", content: "stream a haiku" }],
  stream: true,
});
for await (const e of raw) {
  events.push(e.type);
  if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
}

const helper = client.messages.stream({
  model: "m",
  max_tokens: 64,
  messages: [{ role: "user", content: "stream it again" }],
});
const final = await helper.finalMessage();

const textOf = (m) => m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
report({
  plain: { id: plain.id, text: textOf(plain), stop: plain.stop_reason, usage: plain.usage },
  stream: { text, events },
  helper: { id: final.id, text: textOf(final), stop: final.stop_reason, usage: final.usage },
});
