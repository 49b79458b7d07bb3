// Drives an agentkit UI endpoint with the `ai` package's own chat client (chat.mjs): sends a prompt,
// answers every approval request with DECISION, and waits until the chat is idle with nothing pending.
//
//   node chat-roundtrip.mjs URL PROMPT approve|deny [TOKEN]
//
// Prints {"messages": [...], "finishes": n, "errors": [...]} as JSON.
import { createChat } from './chat.mjs';

const [api, prompt, decision, token] = process.argv.slice(2);
const errors = [];
let finishes = 0;
let settle;
const idle = new Promise(resolve => { settle = resolve; });

const pending = chat =>
  (chat.lastMessage?.parts ?? []).filter(part => part.state === 'approval-requested');

const chat = createChat({
  api,
  headers: token ? { authorization: `Bearer ${token}` } : undefined,
  onError: error => { errors.push(String(error?.message ?? error)); settle(); },
  onFinish: () => {
    finishes += 1;
    queueMicrotask(() => {
      const waiting = pending(chat);
      if (waiting.length === 0) { settle(); return; }
      for (const part of waiting) {
        chat.addToolApprovalResponse({ id: part.approval.id, approved: decision === 'approve', reason: decision === 'approve' ? undefined : 'not today' });
      }
    });
  },
});

const timer = setTimeout(() => { errors.push('timed out after 60 s'); settle(); }, 60_000);
await chat.sendMessage({ text: prompt });
await idle;
clearTimeout(timer);
process.stdout.write(JSON.stringify({ messages: chat.messages, finishes, errors, status: chat.status }));
