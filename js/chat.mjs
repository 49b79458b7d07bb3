// A framework-free `Chat` over the `ai` package's own AbstractChat and DefaultChatTransport: the same
// state machine `useChat` runs, with approvals sent back automatically once every pending call is
// decided (`lastAssistantMessageIsCompleteWithApprovalResponses`). Bundled into the playground
// (build-playground.mjs) and imported as-is by the tests' node scripts.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';

class ObservableState {
  #status = 'ready';
  #error = undefined;
  #messages = [];

  constructor() {
    this.listeners = new Set();
  }

  notify() {
    for (const listener of this.listeners) listener();
  }

  get status() { return this.#status; }
  set status(value) { this.#status = value; this.notify(); }
  get error() { return this.#error; }
  set error(value) { this.#error = value; this.notify(); }
  get messages() { return this.#messages; }
  set messages(value) { this.#messages = [...value]; this.notify(); }

  pushMessage = message => { this.#messages = [...this.#messages, this.snapshot(message)]; this.notify(); };
  popMessage = () => { this.#messages = this.#messages.slice(0, -1); this.notify(); };
  replaceMessage = (index, message) => {
    this.#messages = [...this.#messages.slice(0, index), this.snapshot(message), ...this.#messages.slice(index + 1)];
    this.notify();
  };
  snapshot = value => structuredClone(value);
}

export class Chat extends AbstractChat {
  constructor({ onChange, ...init }) {
    const state = new ObservableState();
    super({ ...init, state });
    if (onChange) state.listeners.add(() => onChange(this));
  }
}

/** A chat with an agentkit UI endpoint at `api`; `headers` are sent with every request. */
export function createChat({ api, headers, onChange, onError, onFinish }) {
  return new Chat({
    transport: new DefaultChatTransport({ api, headers }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onChange,
    onError,
    onFinish,
  });
}
