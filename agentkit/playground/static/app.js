// The playground page: plain JavaScript, no build step. The chat state machine is the Vercel AI SDK's
// own (vendor/ai-chat.js, bundled from js/chat.mjs), talking to /api/chat over the UI message stream.
import { createChat } from './vendor/ai-chat.js';

const token = new URLSearchParams(location.search).get('token');
const headers = token ? { authorization: `Bearer ${token}` } : {};
const $ = id => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null && child !== false) node.append(child);
  }
  return node;
}

const json = value => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

async function api(path, body) {
  const init = body === undefined ? { headers } : {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error ?? response.statusText);
  return data;
}

// ---- the conversation --------------------------------------------------------------------------

const isTool = part => part.type.startsWith('tool-') || part.type === 'dynamic-tool';
const toolName = part => (part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length));

function subagentView(summary) {
  return el('div', { class: 'subagent', 'data-testid': 'subagent' },
    el('div', { class: 'label' }, `subagent ${summary.agentId}${summary.status ? ` · ${summary.status}` : ' · running'}`),
    summary.text ? el('div', { class: 'text' }, summary.text) : null,
    (summary.toolCalls ?? []).map(call => el('div', { class: 'label' }, `${call.toolName}: ${call.state}`)),
  );
}

function toolView(part, progress) {
  const state = part.state;
  const card = el('div', { class: 'tool', 'data-testid': 'tool-call', 'data-tool': toolName(part), 'data-state': state },
    el('div', { class: 'head' }, toolName(part), el('span', { class: `badge ${state}` }, state)),
    el('div', { class: 'label' }, 'input'), el('pre', { 'data-testid': 'tool-input' }, json(part.input ?? null)),
  );
  if (part.toolMetadata?.agentkit?.transformError) {
    card.append(el('div', { class: 'err' }, part.toolMetadata.agentkit.transformError));
  }
  const shown = progress.get(part.toolCallId);
  if (shown !== undefined) card.append(el('div', { class: 'label' }, 'progress'), el('pre', {}, json(shown)));
  if (state === 'output-available') {
    const output = part.output;
    if (part.preliminary && output && output.agentkit === 'subagent') card.append(subagentView(output));
    else card.append(el('div', { class: 'label' }, 'output'), el('pre', { 'data-testid': 'tool-output' }, json(output)));
  } else if (state === 'output-error') {
    card.append(el('div', { class: 'label' }, 'error'), el('pre', { class: 'err', 'data-testid': 'tool-error' }, part.errorText));
  } else if (state === 'output-denied') {
    card.append(el('div', { class: 'err' }, 'denied'));
  } else if (part.approval?.isAutomatic) {
    // needs no approval: the server holds it with the turn's other calls until those are decided
    card.append(el('div', { class: 'label', 'data-testid': 'waits' }, 'no approval needed: runs once the others are decided'));
  } else if (state === 'approval-requested') {
    const decide = approved => () => chat.addToolApprovalResponse({ id: part.approval.id, approved });
    const payload = part.approval.descriptor?.payload;
    card.append(
      el('div', { class: 'label' }, 'approval needed'),
      payload !== undefined ? el('pre', {}, json(payload)) : null,
      el('div', { class: 'approval' },
        el('button', { class: 'approve', 'data-testid': 'approve', onclick: decide(true) }, 'Approve'),
        el('button', { class: 'deny', 'data-testid': 'deny', onclick: decide(false) }, 'Deny')),
    );
  } else if (state === 'approval-responded') {
    card.append(el('div', { class: 'label' }, part.approval.approved ? 'approved: running…' : 'denied'));
  }
  return card;
}

// the typed answer (output_type=): a data part updated in place, `partial` while it streams, then `output`
function outputView(data) {
  const done = 'output' in data;
  return el('div', { class: 'output', 'data-testid': 'output', 'data-state': done ? 'done' : 'streaming' },
    el('div', { class: 'label' }, done ? 'typed answer' : 'typed answer (streaming…)'),
    el('pre', {}, json(done ? data.output : data.partial)),
    data.serializeError ? el('div', { class: 'err' }, data.serializeError) : null);
}

// why the run behind an assistant message ended: its status and the reason, from the finish metadata
function runEnd(message) {
  const run = message.metadata?.agentkit;
  if (!run?.status) return null;
  return el('div', { class: `run-end ${run.status}`, 'data-testid': 'run-end', 'data-status': run.status },
    `${run.status}: ${run.reason ?? ''}`);
}

function messageView(message) {
  if (message.role === 'user') {
    const text = message.parts.filter(p => p.type === 'text').map(p => p.text).join('\n');
    return el('div', { class: 'msg user', 'data-testid': 'user-message' }, text);
  }
  const progress = new Map();
  for (const part of message.parts) {
    if (part.type === 'data-agentkit-progress') progress.set(part.data.toolCallId, part.data.data);
  }
  const view = el('div', { class: 'msg assistant', 'data-testid': 'assistant-message' });
  for (const part of message.parts) {
    if (part.type === 'text' && part.text) view.append(el('div', { class: 'text', 'data-testid': 'assistant-text' }, part.text));
    else if (isTool(part)) view.append(toolView(part, progress));
    else if (part.type === 'data-agentkit-output') view.append(outputView(part.data));
  }
  const end = runEnd(message);
  if (end) view.append(end);
  return view;
}

// ---- the step timeline -------------------------------------------------------------------------

function steps(messages) {
  const out = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    let current = { tools: [] };
    const segments = [current];
    for (const part of message.parts) {
      if (part.type === 'step-start') { current = { tools: [] }; segments.push(current); }
      else if (isTool(part)) current.tools.push(`${toolName(part)} (${part.state})`);
      else if (part.type === 'data-agentkit-step') current.info = part.data;
    }
    out.push(...segments.filter(segment => segment.info));
  }
  return out;
}

// "120 in (80 cached, 10 written) / 30 out (12 reasoning)": the details only where the vendor reported any
function tokens(usage) {
  const cached = [];
  if (usage.cache_read_tokens) cached.push(`${usage.cache_read_tokens} cached`);
  if (usage.cache_write_tokens) cached.push(`${usage.cache_write_tokens} written to cache`);
  const input = `${usage.input_tokens ?? 0} in${cached.length ? ` (${cached.join(', ')})` : ''}`;
  const output = `${usage.output_tokens ?? 0} out${usage.reasoning_tokens ? ` (${usage.reasoning_tokens} reasoning)` : ''}`;
  return `${input} / ${output} tokens`;
}

// the run's estimated cost, from the finish metadata of the last assistant message (genai-prices)
function runCost(messages) {
  const last = [...messages].reverse().find(message => message.role === 'assistant' && message.metadata?.agentkit);
  if (!last) return null;
  const cost = last.metadata.agentkit.cost;
  return cost == null ? 'cost unknown (a model or endpoint without a listed price)' : `estimated cost $${cost}`;
}

function renderTimeline(messages) {
  const list = steps(messages);
  const tab = $('tab-timeline');
  tab.replaceChildren();
  if (!list.length) { tab.append(el('p', { class: 'empty' }, 'Steps appear here as the run goes.')); return; }
  const total = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
  for (const { info, tools } of list) {
    const usage = info.usage ?? {};
    for (const key of Object.keys(total)) total[key] += usage[key] ?? 0;
    tab.append(el('div', { class: 'step', 'data-testid': 'step' },
      el('div', { class: 'title' }, `Step ${info.step + 1}`),
      el('div', { class: 'meta' }, `${info.finishReason ?? '?'} · ${info.toolCalls} tool call(s) · ${tokens(usage)}`),
      tools.length ? el('ul', {}, tools.map(t => el('li', {}, t))) : null));
  }
  tab.append(el('div', { class: 'meta', 'data-testid': 'usage-total' }, `Total: ${total.input_tokens} input + ${total.output_tokens} output tokens`));
  const details = tokens(total);
  if (details.includes('(')) tab.append(el('div', { class: 'meta', 'data-testid': 'usage-details' }, `Details: ${details}`));
  const cost = runCost(messages);
  if (cost) tab.append(el('div', { class: 'meta', 'data-testid': 'run-cost' }, cost));
}

// ---- rendering -----------------------------------------------------------------------------------

function render(current) {
  const box = $('messages');
  box.replaceChildren(...(current.messages.length ? current.messages.map(messageView) : [el('p', { class: 'empty' }, 'Send a message to start a run.')]));
  box.scrollTop = box.scrollHeight;
  const status = $('status');
  status.textContent = current.status;
  status.className = `status ${current.status}`;
  renderRunStatus(current);
  document.querySelector('#composer button').disabled = current.status === 'streaming' || current.status === 'submitted';
  renderTimeline(current.messages);
}

// the header's "last run" line: how the latest run ended, or the error that ended it
function renderRunStatus(current) {
  const box = $('run-status');
  const last = current.messages.at(-1);
  const run = last?.role === 'assistant' ? last.metadata?.agentkit : undefined;
  let status = null, text = '';
  if (current.status === 'error') {
    status = 'error';
    text = `error: ${current.error?.message ?? 'the run failed'}`;
  } else if (current.status === 'ready' && run?.status) {
    status = run.status;
    text = `last run: ${run.status} (${run.reason})`;
  }
  box.hidden = status === null;
  box.textContent = text;
  box.className = `run-status ${status ?? ''}`;
  box.dataset.status = status ?? '';
}

function showError(error) {
  const box = $('error');
  box.hidden = false;
  box.textContent = String(error?.message ?? error);
}

const chat = createChat({ api: 'api/chat', headers, onChange: render, onError: showError });

$('composer').addEventListener('submit', event => {
  event.preventDefault();
  const text = $('prompt').value.trim();
  if (!text) return;
  $('prompt').value = '';
  $('error').hidden = true;
  chat.sendMessage({ text });
});

// ---- the inspectors ------------------------------------------------------------------------------

for (const button of document.querySelectorAll('.tabs button')) {
  button.addEventListener('click', () => {
    for (const other of document.querySelectorAll('.tabs button')) other.classList.toggle('active', other === button);
    for (const tab of document.querySelectorAll('.tab')) tab.hidden = tab.id !== `tab-${button.dataset.tab}`;
    if (button.dataset.tab === 'payloads') showPayload();
    if (button.dataset.tab === 'compatibility') showCompatibility();
  });
}

async function showPayload() {
  const vendor = $('vendor').value;
  if (!vendor) return;
  try {
    const data = await api('api/payload', { vendor, messages: chat.messages });
    $('payload').textContent = json(data.payload);
    $('payload-note').hidden = !data.note;
    $('payload-note').textContent = data.note ?? '';
  } catch (error) {
    $('payload').textContent = `error: ${error.message}`;
  }
}

async function showCompatibility() {
  const tab = $('tab-compatibility');
  try {
    const rows = await api('api/compatibility');
    tab.replaceChildren(el('table', {},
      el('tr', {}, el('th', {}, 'vendor'), el('th', {}, 'tool'), el('th', {}, 'verdict'), el('th', {}, 'what changes')),
      rows.map(row => el('tr', {},
        el('td', {}, row.vendor), el('td', {}, row.wireName && row.wireName !== row.key ? `${row.key} → ${row.wireName}` : row.key),
        el('td', { class: row.rejected ? 'rejected' : 'ok' }, row.rejected ? 'rejected' : row.strict ? 'ok (strict)' : 'ok'),
        el('td', {}, [row.nameProblem, ...row.losses].filter(Boolean).join('; ') || '—')))));
  } catch (error) {
    tab.textContent = `error: ${error.message}`;
  }
}

$('vendor').addEventListener('change', showPayload);

api('api/agent').then(info => {
  $('agent').textContent = `${info.name} · model ${info.model ?? '(none)'} · ${info.tools.length} tool(s)`;
  $('vendor').replaceChildren(...info.vendors.map(v => el('option', { value: v }, v)));
  $('tab-tools').replaceChildren(...info.tools.map(t => el('div', { class: 'tool' },
    el('div', { class: 'head' }, t.key, t.requiresApproval ? el('span', { class: 'badge approval-requested' }, 'needs approval') : null),
    el('div', { class: 'text' }, t.description),
    el('div', { class: 'label' }, 'input schema'), el('pre', {}, json(t.inputSchema)))));
}).catch(showError);
