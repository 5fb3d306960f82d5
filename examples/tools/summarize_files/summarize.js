// summarize_files: the jsonrpc protocol in Node, per-call mode.
// The gateway sends one tools/call; this script reports progress, calls
// another tool through the gateway for each text, and answers.
const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin });
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const waiting = new Map();
let nextId = 1;

// request sends a request to the gateway and resolves with its result.
function request(method, params) {
  const id = "s" + nextId++;
  send({ id, method, params });
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

async function handle(call) {
  const { texts, tool = "word_count" } = call.params.arguments;
  const token = call.params._meta.progressToken;
  let total = 0;
  const counts = [];
  for (const [i, text] of texts.entries()) {
    send({ method: "notifications/progress",
           params: { progressToken: token, progress: i, total: texts.length, message: `text ${i + 1} of ${texts.length}` } });
    const result = await request("tools/call", { name: tool, arguments: { text } });
    const words = result.structuredContent ? result.structuredContent.words : NaN;
    counts.push(words);
    total += words;
  }
  send({ method: "notifications/message", params: { level: "info", data: `counted ${texts.length} texts` } });
  return {
    content: [{ type: "text", text: `${total} words in ${texts.length} texts` }],
    structuredContent: { total, counts },
  };
}

rl.on("line", async (line) => {
  const msg = JSON.parse(line);
  if (waiting.has(msg.id)) {
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    msg.error ? w.reject(new Error(msg.error.message)) : w.resolve(msg.result);
    return;
  }
  if (msg.method !== "tools/call") return;
  try {
    send({ id: msg.id, result: await handle(msg) });
  } catch (err) {
    send({ id: msg.id, result: { content: [{ type: "text", text: String(err) }], isError: true } });
  }
});
