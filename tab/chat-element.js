// `<tabrelay-chat>`: the chat bar a person types to, drawing a chat of ./chat.js (set its
// `chat` property; createTabrelay does with its `chat` option). The model's text streams in as
// it comes (appended once a frame, so a long answer never blocks the page); each tool call is a
// line (tool, arguments in words, whether it waits for the card, runs, or how it ended, and how
// long it took); a question of the model's (ask_person) is a row of buttons (a click or Enter
// sends the choice; a half-typed message stays); each turn ends with a footer saying what left
// the browser; Stop at any time; Export as Markdown. Keyboard first (Enter sends, Shift+Enter is a
// new line), every control labelled, and at home in 390 px.
//
// The key field is emptied as soon as the key is saved: the key is never in the DOM after it is
// typed (the element says where it is kept, never any of it).



const Base = globalThis.HTMLElement || class {};

/** The words of a tool line's state. */
export const LINE_WORDS = Object.freeze({ queued: 'waiting its turn', asking: 'waiting for your answer on the card', running: 'running' });
/** What the key's place reads as. */
export const KEY_WORDS = Object.freeze({ tab: 'A key is kept for this tab only.', browser: 'A key is remembered in this browser (Forget key removes it).', none: 'No key yet: paste one to chat.' });

/** How long a call took, in words. */
export function tookWords(ms) {
  if (ms == null) return '';
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A tool line as the person reads it. */
export function toolLineWords(line) {
  const what = `${line.tool}${line.words ? ` (${line.words})` : ''}`;
  if (line.state !== 'ended') return `${what}: ${LINE_WORDS[line.state] ?? line.state}`;
  return `${what}: ${line.outcome === 'done' ? 'done' : line.outcome} in ${tookWords(line.ms)}`;
}

const CSS = `
  :host { display: block; font: inherit; color: inherit; }
  :host([hidden]) { display: none; }
  * { box-sizing: border-box; }
  button, select, input, textarea { font: inherit; }
  button { padding: .35rem .8rem; border-radius: .3rem; border: 1px solid #0b5cad; background: #fff; color: #0b5cad; cursor: pointer; }
  button[part~=primary] { background: #0b5cad; color: #fff; }
  button:disabled { opacity: .5; cursor: default; }
  :focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  [part=log] { max-height: 28rem; overflow-y: auto; overflow-wrap: anywhere; display: grid; gap: .4rem; margin: 0 0 .5rem; }
  [part=log]:empty::before { content: attr(data-empty); color: #5b5b60; }
  [part~=person] { justify-self: end; background: #e8f0fa; border-radius: .5rem; padding: .35rem .6rem; max-width: 90%; white-space: pre-wrap; }
  [part~=model] { white-space: pre-wrap; }
  [part~=tool-line] { font-size: .9rem; color: #36363a; border-left: 3px solid #8a8a90; padding-left: .5rem; }
  [part~=tool-line][data-state=asking] { border-color: #b3261e; }
  [part~=note], [part~=footer] { font-size: .85rem; color: #5b5b60; margin: 0; }
  [part~=note][data-note=error], [part~=note][data-note=limit] { color: #b3261e; }
  [part=ask] { display: grid; gap: .4rem; }
  [part=ask][hidden] { display: none; }
  [part=choices] { display: flex; flex-wrap: wrap; gap: .4rem; }
  [part=waiting] { margin: 0 0 .4rem; font-size: .9rem; }
  [part=waiting]:empty { display: none; }
  [part=tools] { margin: 0; color: #5b5b60; }
  [part=tools]:empty { display: none; }
  form { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: .4rem; align-items: end; }
  textarea { width: 100%; min-height: 2.6rem; resize: vertical; padding: .35rem .5rem; border: 1px solid #8a8a90; border-radius: .3rem; }
  [part=buttons] { display: flex; gap: .4rem; }
  details { margin-top: .5rem; font-size: .9rem; }
  [part=settings-body] { display: grid; gap: .45rem; margin: .4rem 0 0; padding: 0; border: 0; min-width: 0; }
  label { display: grid; gap: .15rem; }
  label.inline { display: flex; gap: .4rem; align-items: center; }
  [part=key-row], [part=row] { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
  input[type=password], input[type=number], select { width: 100%; max-width: 100%; padding: .3rem; }
  [part=key-said], [part=models-said], [part=spent] { margin: 0; color: #5b5b60; }
  [part=models-said]:empty { display: none; }
`;

export class ChatElement extends Base {
  #chat = null;
  #off = [];
  #root;
  #els = {};
  #pending = '';
  #frame = 0;
  #lines = new Map();
  /** The answer streaming in: the log's last element, made the model's entry in place once whole. */
  #live = null;
  /** Whether the log follows its end (the person has not scrolled up). */
  #stick = true;
  /** A message sent to a stopped chat: it stays in the field until its turn starts (or is refused). */
  #held = null;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${CSS}</style>
      <div part="log" role="log" aria-live="polite" aria-label="Conversation with the model" data-empty="Ask the model to do something in this app: it acts here, under your permissions."></div>
      <div part="ask" hidden role="group" aria-labelledby="ask-question"><p id="ask-question" part="ask-question"></p><div part="choices"></div></div>
      <p part="waiting" role="status"></p>
      <form part="composer">
        <textarea part="message" aria-label="Message to the model" placeholder="Ask the model…" rows="2" disabled></textarea>
        <div part="buttons"><button part="send primary" type="submit" disabled>Send</button><button part="stop" type="button" hidden>Stop</button></div>
      </form>
      <details part="settings"><summary>Chat settings: provider, key, model, budget</summary>
        <fieldset part="settings-body" disabled>
          <label>Provider<select part="provider"></select></label>
          <label>API key <span part="key-for"></span><input part="key" type="password" autocomplete="off" spellcheck="false"></label>
          <div part="key-row"><label class="inline"><input part="remember" type="checkbox"> Remember in this browser</label><button part="save-key" type="button">Save key</button><button part="forget-key" type="button">Forget key</button></div>
          <p part="key-said"></p>
          <label>Model<select part="model"></select></label>
          <p part="models-said" role="status"></p>
          <label>Token budget for this chat (0: none)<input part="budget" type="number" min="0" step="1000" inputmode="numeric"></label>
          <p part="spent"></p>
          <p part="tools"></p>
          <div part="row"><button part="export" type="button">Export as Markdown</button></div>
        </fieldset>
      </details>`;
    for (const el of this.#root.querySelectorAll('[part]')) this.#els[el.getAttribute('part').split(' ')[0]] = el;
    const e = this.#els;
    e.log.addEventListener('scroll', () => (this.#stick = e.log.scrollHeight - e.log.scrollTop - e.log.clientHeight < 40), { passive: true });
    e.composer.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.#send();
    });
    e.message.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.#send();
      }
    });
    e.stop.addEventListener('click', () => this.#chat?.stop());
    e.provider.addEventListener('change', () => this.#chat?.chooseProvider(e.provider.value));
    e.model.addEventListener('change', () => this.#chat?.chooseModel(e.model.value));
    e.budget.addEventListener('change', () => this.#chat?.setBudget(Number(e.budget.value) || 0));
    e['save-key'].addEventListener('click', () => this.#saveKey());
    e.key.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        this.#saveKey();
      }
    });
    e['forget-key'].addEventListener('click', () => {
      this.#chat?.forgetKey();
      e.key.value = '';
    });
    e.export.addEventListener('click', () => this.#export());
  }

  get chat() {
    return this.#chat;
  }
  set chat(chat) {
    for (const off of this.#off) off();
    this.#off = [];
    this.#chat = chat;
    // Nothing typed is lost: the field takes a message once a chat is there to send it.
    this.#els.message.disabled = !chat;
    this.#els.send.disabled = !chat;
    this.#els['settings-body'].disabled = !chat;
    this.#els.log.textContent = '';
    this.#live = null;
    this.#lines.clear();
    if (!chat) return;
    for (const entry of chat.conversation.entries()) this.#entry(entry);
    this.#off.push(chat.conversation.subscribe((entry) => this.#entry(entry)));
    this.#off.push(chat.subscribe((event) => this.#event(event)));
    this.#settings();
    if (chat.keyKept() && !chat.models().length) chat.listModels();
  }

  disconnectedCallback() {
    cancelAnimationFrame?.(this.#frame);
  }

  #send() {
    const chat = this.#chat;
    const e = this.#els;
    if (!chat || chat.busy) return;
    const text = e.message.value;
    if (!text.trim()) return;
    // A stopped chat goes on only once the person's device confirmed it: the message stays in
    // the field until it is sent (a refusal leaves it there, its sentence in the log).
    if (chat.stopped) this.#held = text;
    else e.message.value = '';
    chat.send(text).finally(() => {
      if (this.#held === text) this.#held = null;
    });
  }

  #saveKey() {
    const e = this.#els;
    const key = e.key.value;
    // The key leaves the DOM at once: kept by the chat in the storage chosen, never shown again.
    e.key.value = '';
    if (this.#chat?.setKey(this.#chat.provider, key, { remember: e.remember.checked })) this.#chat.listModels();
  }

  #export() {
    const chat = this.#chat;
    if (!chat) return;
    const blob = new Blob([chat.toMarkdown(`Chat in ${document.title || 'this app'}`)], { type: 'text/markdown' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `chat-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.md`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  #add(part, text, attrs = {}) {
    const el = document.createElement(part === 'person' || part === 'model' ? 'div' : 'p');
    el.setAttribute('part', part);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    el.textContent = text;
    // Before the answer streaming in, which stays last.
    this.#els.log.insertBefore(el, this.#live);
    this.#follow();
    return el;
  }

  /** Keeps the log at its end unless the person scrolled up (read once the frame lays out anyway). */
  #follow() {
    if (this.#stick) this.#els.log.scrollTop = this.#els.log.scrollHeight;
  }

  #entry(entry) {
    if (entry.kind === 'person') this.#add('person', entry.text);
    else if (entry.kind === 'model') {
      const text = entry.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n\n');
      this.#flushText();
      const live = this.#live;
      this.#live = null;
      if (live && live.textContent === text) {
        // The streamed text is the answer: its element becomes the entry, laid out once only.
        live.setAttribute('part', 'model');
        live.setAttribute('data-model', entry.model);
        live.removeAttribute('aria-hidden');
      } else {
        live?.remove();
        if (text) this.#add('model', text, { 'data-model': entry.model });
      }
    } else if (entry.kind === 'note' && entry.note !== 'summary') {
      this.#dropLive();
      this.#add('note', entry.text, { 'data-note': entry.note });
    } else if (entry.kind === 'note') this.#add('note', 'The conversation was summarised to fit the model’s window.', { 'data-note': 'summary' });
  }

  #event(event) {
    const e = this.#els;
    if (event.type === 'text') {
      // Appended once a frame: thousands of pieces never cost more than one text change a frame.
      this.#pending += event.text;
      if (!this.#frame) this.#frame = requestAnimationFrame(() => this.#flushText());
      return;
    }
    if (event.type === 'restart') this.#dropLive();
    else if (event.type === 'call') {
      const line = event.line;
      let el = this.#lines.get(line.callId);
      if (!el) {
        el = this.#add('tool-line', '', { 'data-call': line.callId });
        this.#lines.set(line.callId, el);
      }
      el.dataset.state = line.state;
      el.textContent = toolLineWords(line);
    } else if (event.type === 'asking') this.#ask(event.asking);
    else if (event.type === 'ended') {
      const footer = this.#chat.footer(event.turn);
      if (footer) this.#add('footer', footer, { 'data-turn': String(event.turn) });
    } else if (event.type === 'change') {
      // A call of the chat is waiting for the card or running: its line follows.
      for (const [id, el] of this.#lines) {
        const line = this.#chat.toolLine(id);
        if (line && el.dataset.state !== line.state) {
          el.dataset.state = line.state;
          el.textContent = toolLineWords(line);
        }
      }
    }
    if (event.type === 'turn') {
      this.#ask(null);
      // The message sent to a stopped chat went: it leaves the field (unless the person changed it).
      if (this.#held !== null && e.message.value === this.#held) e.message.value = '';
      this.#held = null;
    }
    const busy = this.#chat.busy;
    // Stop goes with the turn: the focus on it goes to the field, not the page.
    if (!busy && this.#root.activeElement === e.stop) e.message.focus();
    e.stop.hidden = !busy;
    e.send.disabled = busy;
    e.log.setAttribute('aria-busy', String(busy));
    e.waiting.textContent = this.#chat.live()?.waiting ?? '';
    this.#settings();
  }

  /** The streamed text so far, appended once a frame to the answer streaming in (made when none is). */
  #flushText() {
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    if (!this.#pending) return;
    if (!this.#live) {
      this.#live = document.createElement('div');
      this.#live.setAttribute('part', 'live');
      // Read once whole (the log is busy meanwhile), not piece by piece.
      this.#live.setAttribute('aria-hidden', 'true');
      this.#live.style.whiteSpace = 'pre-wrap';
      this.#live.append(document.createTextNode(''));
      this.#els.log.append(this.#live);
    }
    this.#live.firstChild.appendData(this.#pending);
    this.#pending = '';
    this.#follow();
  }

  /** What streamed in goes (a retry takes it back; a note says what was shown of it). */
  #dropLive() {
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.#pending = '';
    this.#live?.remove();
    this.#live = null;
  }

  #ask(asking) {
    const e = this.#els;
    e.choices.textContent = '';
    e.ask.hidden = !asking;
    if (!asking) return;
    e['ask-question'].textContent = asking.question;
    for (const choice of asking.choices) {
      const b = document.createElement('button');
      b.type = 'button';
      b.setAttribute('part', 'choice');
      b.textContent = choice;
      b.addEventListener('click', () => {
        this.#chat?.choose(choice);
        // The choices go once one is sent: the focus goes to the field (the draft in it), not the page.
        e.message.focus();
      });
      e.choices.append(b);
    }
  }

  #settings() {
    const chat = this.#chat;
    const e = this.#els;
    if (!chat) return;
    const providers = chat.providers();
    if (e.provider.options.length !== providers.length) {
      e.provider.textContent = '';
      for (const p of providers) e.provider.append(new Option(p.name, p.id));
    }
    e.provider.value = chat.provider;
    const name = providers.find((p) => p.id === chat.provider)?.name ?? chat.provider;
    e['key-for'].textContent = `for ${name} (sent only to ${providers.find((p) => p.id === chat.provider)?.origin ?? 'its address'})`;
    e['key-said'].textContent = KEY_WORDS[chat.keyKept() ?? 'none'];
    e['forget-key'].disabled = !chat.keyKept();
    const models = chat.models();
    const ids = models.map((m) => m.id).join('\n');
    if (e.model.dataset.ids !== ids) {
      e.model.textContent = '';
      for (const m of models) e.model.append(new Option(m.name, m.id));
      e.model.dataset.ids = ids;
    }
    if (chat.model) e.model.value = chat.model;
    e['models-said'].textContent = chat.modelsSaid();
    if (this.#root.activeElement !== e.budget) e.budget.value = String(chat.conversation.budget);
    e.spent.textContent = `Spent so far: ${chat.conversation.spent()} tokens.`;
    const tools = chat.tools();
    e.tools.textContent = tools.length ? `The model may use ${tools.map((t) => t.title).join(', ')}, each under your permissions.` : '';
  }
}

if (globalThis.customElements && !customElements.get('tabrelay-chat')) customElements.define('tabrelay-chat', ChatElement);

