// Usage: node openai.mjs <base URL>. A plain and a streamed chat completion
// through the official openai SDK, with retries off so that each call is
// exactly one request.
import { sdk, report } from "./load.mjs";

const OpenAI = sdk("openai");
const client = new OpenAI({ baseURL: process.argv[2], apiKey: "gate-dummy-key", maxRetries: 0 });
const messages = [{ role: "user", content: "write a haiku" }];

const plain = await client.chat.completions.create({ model: "m", messages });

const stream = await client.chat.completions.create({
  model: "m",
  messages: [{ role: "user", content: "stream a haiku" }],
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let chunks = 0;
let finish = null;
let usage = null;
for await (const chunk of stream) {
  ++chunks;
  for (const c of chunk.choices) {
    text += c.delta?.content ?? "";
    if (c.finish_reason) finish = c.finish_reason;
  }
  if (chunk.usage) usage = chunk.usage;
}

report({
  plain: { id: plain.id, text: plain.choices[0].message.content, finish: plain.choices[0].finish_reason, usage: plain.usage },
  stream: { text, chunks, finish, usage },
});
