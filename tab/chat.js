// The chat bar's engine, without any DOM: the person's own agent in the tab, with their own
// key. One message of the person is one turn: the model is called (./chat-provider.js: streamed,
// retried as the failure's kind says, the budget checked first), its tool calls run one after
// another in its order, each through the same door as every other agent's (`handle(call)`: the
// record, the data switch, the person's permissions, the card, the activity line with Stop and
// Undo turn), their results go back, and the model is called again until it stops, the person
// presses Stop, or the budget is spent. ./chat-element.js draws it (`<tabrelay-chat>`).
//
//   import { createChat } from './chat.js';
//   const chat = createChat({ app: 'orders', presence, handle: (call) => bridge.handle(call), tools: () => bridge.tools() });
//   chat.setKey('anthropic', key);   // kept for this tab; { remember: true }: kept in this browser
//   await chat.send('Highlight the outliers');
//
// Every call of the chat carries the turn, the model's name as its agent and the chat as its
// connection ({id: <conversation>, kind: 'chat'}), so grants "for this chat", Stop, Undo turn
// and the record treat it as any other agent. Keys: kept in sessionStorage unless the person
// asks to remember one (localStorage), sent in a header to their provider's origin only, never
// in an entry, an event, an export, a URL or a log; `forgetKey` removes one.

import { INSTRUCTIONS, CHAT_INSTRUCTIONS, PRESENCE } from './generated/bundle.js';
import { createConversation, dataText, estimateTokens, tokensOf } from './chat-conversation.js';
import { callModel, ProviderError, BudgetRefusal } from './chat-provider.js';
import { createAnthropic } from './chat-anthropic.js';
import { createOpenAI } from './chat-openai.js';

/** The instructions the chat's model reads: the bundle's one text, then its part for the chat. */
export const CHAT_MODEL_INSTRUCTIONS = `${INSTRUCTIONS}\n${CHAT_INSTRUCTIONS}`;
/** The chat's own tool: a question with 2 to 5 choices shown as buttons; it ends the turn. */
export const ASK_PERSON = Object.freeze({
  name: 'ask_person',
  description: 'Ask the person to choose: shows your question with 2 to 5 short choices as buttons and ends your turn; their choice comes back as their next message.',
  inputSchema: Object.freeze({ type: 'object', properties: { question: { type: 'string' }, choices: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 5 } }, required: ['question', 'choices'] }),
});
/** The sentences the chat says. */
export const CHAT_SAID = Object.freeze({
  noKey: 'Paste a key for {provider} in the chat’s settings first: the chat calls the model with your own key.',
  noModel: 'Choose a model in the chat’s settings first.',
  stopped: 'You pressed Stop.',
  askBad: 'ask_person needs a question and 2 to 5 choices, each a short text.',
  asked: 'The choices are shown to the person; their answer comes as their next message.',
  refusal: 'The model declined to answer.',
  length: 'The answer reached its most tokens and was cut.',
  tooManySteps: 'The model made {n} calls in this turn without finishing: the turn ends here; ask again to go on.',
  picture: '(A picture was left out: the chat sends text only.)',
  held: 'Your chat was stopped, and goes on only once your device confirms it is you ({why}): your message was not sent.',
});
/**
 * How far the provider's own count of a call's input may move the estimate of the next (a
 * character is a quarter token until a call was counted; code, JSON and other scripts run
 * denser): the last call's count over its estimate, within these bounds.
 */
export const ESTIMATE_SCALE = Object.freeze({ least: 0.5, most: 4 });
/** The most model calls one turn makes (a model that never stops is stopped). */
export const MAX_MODEL_CALLS = 25;
/** Where a key is kept: `${KEY_PREFIX}:${app}:${provider}` in session- or localStorage. */
export const KEY_PREFIX = 'tabrelay:chat-key';
/** Where the chat's choices (provider, model, budget) are kept: `${SETTINGS_PREFIX}:${app}`. */
export const SETTINGS_PREFIX = 'tabrelay:chat';

/** The providers the chat offers, each at its origin (`origins`: provider id → origin). */
export function defaultProviders(origins = {}, fetchFn) {
  const opts = (id) => ({ ...(origins[id] ? { origin: origins[id] } : {}), ...(fetchFn ? { fetch: fetchFn } : {}) });
  return { anthropic: createAnthropic(opts('anthropic')), openai: createOpenAI(opts('openai')) };
}

/** A tool call's arguments in words, short: `ids: 1, 2; column: score`. */
export function argumentsInWords(input, chars = 120) {
  const words = Object.entries(input ?? {})
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('; ');
  return words.length > chars ? `${words.slice(0, chars - 1)}…` : words;
}

/** What a tool's result is to the model: its data as data (between the data tags), pictures left out. */
export function resultText(result) {
  const text = dataText(result?.data ?? null);
  return result?.image ? `${text}\n${CHAT_SAID.picture}` : text;
}

/** A host name, for the footer. */
function hostOf(origin) {
  try {
    return new URL(origin).host;
  } catch {
    return String(origin);
  }
}

function said(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, k) => String(values[k]));
}

function randomId() {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return `chat-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The chat. `app`: the app's name (keys and choices kept under it); `presence`: the person's
 * presence (Stop, the chat's lines); `handle(call)`: the door every agent's call goes through;
 * `tools()`: the tools agents reach ([{name, definition}] as the bridge lists them), and
 * `subscribeTools(fn)` hears them change;
 * `providers` (id → provider) or `origins` (id → origin) and `fetch`; `dataKeptOut()`: whether
 * the data switch keeps values and pictures out now (the footer says so); `session`, `local`:
 * the storages (default the browser's); `id`: the conversation's; `budget`: the token budget
 * until the person sets one; `instructions`.
 */
export function createChat({ app, presence, handle, tools = () => [], subscribeTools = null, providers, origins, budget = 0, fetch: fetchFn, dataKeptOut = () => false, session = globalThis.sessionStorage ?? null, local = globalThis.localStorage ?? null, id = randomId(), instructions = CHAT_MODEL_INSTRUCTIONS, now = () => Date.now() } = {}) {
  if (!app) throw new Error('createChat needs the app’s name: keys and choices are kept under it.');
  if (typeof handle !== 'function') throw new Error('createChat needs handle(call): every call goes through the person’s permissions.');
  const offered = providers || defaultProviders(origins, fetchFn);
  const settingsKey = `${SETTINGS_PREFIX}:${app}`;
  const kept = readSettings();
  const talk = createConversation({ id, budget: kept.budget ?? budget, now });
  const connection = Object.freeze({ id, kind: 'chat', client: 'your chat in this tab', host: '' });
  const listeners = new Set();
  let providerId = offered[kept.provider] ? kept.provider : Object.keys(offered)[0];
  let modelId = kept.provider === providerId ? kept.model ?? null : null;
  let models = [];
  let modelsSaid = '';
  let turn = 0;
  let nextCall = 1;
  /** Whether a message waits for the person's device to let the stopped chat go on. */
  let goingOn = false;
  /** The provider's count of the last call's input over its estimate (see ESTIMATE_SCALE). */
  let scale = 1;
  /** The turn under way: {n, controller, text, waiting, calls: Map id → line, stopping}. */
  let live = null;
  /** The question the model asked (ask_person) until the person answers: {question, choices}. */
  let asking = null;
  /** Turn → what left the browser in it, in words. */
  const footers = new Map();
  /** Call id → its line in the chat: {tool, words, state, outcome, ms}. */
  const toolLines = new Map();

  const emit = (event = { type: 'change' }) => {
    for (const fn of listeners) fn(event);
  };

  // The tools shown follow the app's.
  subscribeTools?.(() => emit());
  // A call of the chat asking the person, running, ended: its line in the chat follows.
  presence?.watch?.((e) => {
    const line = toolLines.get(String(e.call?.id));
    if (!line) return;
    if (e.type === 'asking') line.state = 'asking';
    else if (e.type === 'running') line.state = 'running';
    else return;
    emit();
  });

  const chat = {
    id,
    connection,
    conversation: talk,
    /** The providers offered: [{id, name, origin}]. */
    providers: () => Object.values(offered).map((p) => ({ id: p.id, name: p.name, origin: p.origin })),
    get provider() {
      return providerId;
    },
    get model() {
      return modelId;
    },
    /** The tools the model may call (the app's, under the person's permissions), by name and title. */
    tools: () => tools().map((x) => ({ name: x.definition?.name ?? x.name, title: x.definition?.title ?? x.definition?.annotations?.title ?? x.name })),
    /** The models listed for the provider (after `listModels`), and why none are when none are. */
    models: () => models.slice(),
    modelsSaid: () => modelsSaid,
    get turn() {
      return turn;
    },
    /** Whether a turn is under way. */
    get busy() {
      return live !== null;
    },
    /** Whether the chat's agent is stopped: the next message goes only once the person's device confirms it. */
    get stopped() {
      return Boolean(presence?.isStopped?.(id));
    },
    /** What the turn under way shows: {text (streamed so far), waiting (a retry's sentence)}; null when none. */
    live: () => (live ? { turn: live.n, text: live.text, waiting: live.waiting } : null),
    asking: () => asking,
    footer: (n) => footers.get(n) ?? null,
    toolLine: (callId) => toolLines.get(String(callId)) ?? null,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    /** The person chose provider `id` (its models are listed again). */
    chooseProvider(pid) {
      if (!offered[pid] || pid === providerId) return;
      providerId = pid;
      modelId = null;
      scale = 1;
      models = [];
      saveSettings();
      emit();
      return chat.listModels();
    },
    chooseModel(mid) {
      if ((mid || null) !== modelId) scale = 1;
      modelId = mid || null;
      saveSettings();
      emit();
    },
    setBudget(tokens) {
      talk.setBudget(tokens);
      saveSettings();
      emit();
    },
    /** Whether a key for `pid` is kept, and where: 'tab', 'browser' or null. */
    keyKept(pid = providerId) {
      if (read(session, keyName(pid))) return 'tab';
      if (read(local, keyName(pid))) return 'browser';
      return null;
    },
    /** The person's key for `pid`: kept for this tab, or in this browser when they press Remember. */
    setKey(pid, key, { remember = false } = {}) {
      const name = keyName(pid);
      const value = String(key ?? '').trim();
      if (!value) return false;
      write(remember ? local : session, name, value);
      remove(remember ? session : local, name);
      emit();
      return true;
    },
    /** Forget key: gone from both storages. */
    forgetKey(pid = providerId) {
      remove(session, keyName(pid));
      remove(local, keyName(pid));
      models = pid === providerId ? [] : models;
      emit();
    },
    /** Lists the provider's models from its API (with the person's key); the first is chosen when none is. */
    async listModels() {
      const provider = offered[providerId];
      const key = keyOf(providerId);
      if (!key) {
        models = [];
        modelsSaid = said(CHAT_SAID.noKey, { provider: provider.name });
        emit();
        return models;
      }
      try {
        models = await provider.models({ key });
        modelsSaid = '';
        if (!models.some((m) => m.id === modelId)) modelId = models[0]?.id ?? null;
      } catch (err) {
        models = [];
        modelsSaid = err instanceof ProviderError ? err.message : String(err?.message ?? err);
      }
      emit();
      return models;
    },

    /** The person's message: a turn. Resolves once the turn ended (however it ended). */
    async send(text) {
      const words = String(text ?? '').trim();
      if (!words || live || goingOn) return false;
      if (presence?.isStopped?.(id)) {
        // Stopped (its activity line's Stop, or the chat's Stop during a tool call): a message
        // lets it go on only as the activity line's "Let it go on" does, once the person's device
        // confirmed it is them. Text typed into the field is no proof: an agent driving the
        // browser can type too.
        goingOn = true;
        let refused;
        try {
          refused = await presence.confirmed(PRESENCE.SETTING, `go on\n${id}`);
        } finally {
          goingOn = false;
        }
        if (refused) {
          talk.note('stopped', said(CHAT_SAID.held, { why: refused }), turn);
          emit({ type: 'held', sentence: refused });
          return false;
        }
        presence.goOn(id);
        if (live) return false;
      }
      const n = ++turn;
      asking = null;
      talk.person(words, n);
      const controller = new AbortController();
      live = { n, controller, text: '', waiting: null, sent: { calls: 0, results: 0, summary: false, asked: false } };
      emit({ type: 'turn', turn: n });
      try {
        await runTurn(live);
      } finally {
        footers.set(n, footerOf(live));
        live = null;
        emit({ type: 'ended', turn: n });
      }
      return true;
    },
    /** The person picked a choice of the model's question: sent as their message. */
    choose(choice) {
      if (!asking || !asking.choices.includes(choice)) return false;
      return chat.send(choice);
    },
    /**
     * Stop: the provider's stream is aborted, a call waiting for the person or running is stopped
     * the way the activity line's Stop stops it, and the turn ends.
     */
    stop() {
      if (!live || live.stopping) return;
      live.stopping = true;
      live.controller.abort(new DOMException(CHAT_SAID.stopped, 'AbortError'));
      for (const line of presence?.lines?.() ?? []) {
        if (line.connection?.id === id && line.turn === live.n && !line.stopped) presence.stop(line.key);
      }
      emit();
    },
    /** The presence's Stop on one of the chat's lines (the activity line's): the turn ends. */
    stoppedByLine(line) {
      if (live && line?.turn === live.n) chat.stop();
    },
    toMarkdown(title) {
      return talk.toMarkdown(title);
    },
  };

  async function runTurn(t) {
    const provider = offered[providerId];
    const key = keyOf(providerId);
    if (!key) return talk.note('error', said(CHAT_SAID.noKey, { provider: provider.name }), t.n);
    if (!modelId) return talk.note('error', CHAT_SAID.noModel, t.n);
    const model = modelId;
    const agent = models.find((m) => m.id === model)?.name || model;
    const window = models.find((m) => m.id === model)?.window ?? 0;
    const signal = t.controller.signal;
    const toolDefs = [...tools().map((x) => ({ name: x.definition?.name ?? x.name, description: x.definition?.description ?? '', inputSchema: x.definition?.inputSchema ?? { type: 'object' } })), ASK_PERSON];
    // What a call sends, estimated: the messages, the instructions and the tools' descriptions,
    // scaled by how the provider counted the last call (its own count is what is spent).
    const toolTokens = tokensOf(JSON.stringify(toolDefs));
    const rough = (messages) => estimateTokens(messages, instructions) + toolTokens;
    const counted = (estimate, usage) => {
      if (estimate > 0 && usage?.input > 0) scale = Math.min(ESTIMATE_SCALE.most, Math.max(ESTIMATE_SCALE.least, usage.input / estimate));
    };
    const hooks = (estimate) => ({
      onEvent: (e) => {
        if (e.type === 'text') {
          t.text += e.text;
          emit({ type: 'text', text: e.text, turn: t.n });
        } else if (e.type === 'restart') {
          t.text = '';
          emit({ type: 'restart', turn: t.n });
        }
      },
      onWait: (w) => {
        t.waiting = w?.sentence ?? null;
        emit({ type: 'waiting', waiting: t.waiting, ms: w?.ms ?? 0 });
      },
      onTried: (usage, why) => talk.note('tried', `A call to ${provider.name} ended without an answer (${why}); its tokens count.`, t.n, usage),
      beforeRetry: () => talk.budgetRefusal(estimate),
    });
    try {
      // Once, at the start of the turn: a conversation that would not fit is summarised.
      const ask = talk.wouldOverflow(window / scale, instructions) ? talk.summaryRequest() : null;
      if (ask) {
        const estimate = Math.ceil(estimateTokens(ask) * scale);
        const refusal = talk.budgetRefusal(estimate);
        if (refusal) return talk.note('limit', refusal, t.n);
        t.sent.summary = true;
        const out = await callModel(provider, { key, model, messages: ask, tools: [], signal }, { ...hooks(estimate), onEvent: () => {} });
        talk.summary(out.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n'), t.n, out.usage);
      }
      for (let step = 0; ; step++) {
        if (step >= MAX_MODEL_CALLS) return talk.note('limit', said(CHAT_SAID.tooManySteps, { n: MAX_MODEL_CALLS }), t.n);
        const messages = talk.messages();
        const raw = rough(messages);
        const estimate = Math.ceil(raw * scale);
        const refusal = talk.budgetRefusal(estimate);
        if (refusal) return talk.note('limit', refusal, t.n);
        t.text = '';
        t.sent.calls++;
        const out = await callModel(provider, { key, model, instructions, messages, tools: toolDefs, signal }, hooks(estimate));
        counted(raw, out.usage);
        t.text = '';
        talk.model({ provider: provider.id, model, parts: out.parts, stop: out.stop, usage: out.usage }, t.n);
        const calls = out.parts.filter((p) => p.type === 'tool_call');
        if (!calls.length) {
          if (out.stop === 'refusal') talk.note('refusal', CHAT_SAID.refusal, t.n);
          if (out.stop === 'length') talk.note('limit', CHAT_SAID.length, t.n);
          return;
        }
        for (const c of calls) {
          if (signal.aborted) break;
          if (c.name === ASK_PERSON.name) {
            const q = readQuestion(c.input);
            talk.toolResult({ callId: c.id, name: c.name, content: q ? CHAT_SAID.asked : CHAT_SAID.askBad, isError: !q }, t.n);
            if (q) {
              asking = q;
              t.sent.asked = true;
              emit({ type: 'asking', asking: q });
              return;
            }
            continue;
          }
          await runCall(c, agent, t);
        }
        if (signal.aborted) throw signal.reason;
      }
    } catch (err) {
      if (signal.aborted) {
        const partial = err?.partial;
        const shown = partial?.parts?.filter((p) => p.type === 'text').map((p) => p.text).join('') || t.text;
        talk.note('stopped', shown ? `${CHAT_SAID.stopped} The answer so far: ${shown}` : CHAT_SAID.stopped, t.n, partial?.usage);
      } else if (err instanceof BudgetRefusal) talk.note('limit', err.message, t.n);
      else if (err instanceof ProviderError) talk.note('error', err.message, t.n);
      else talk.note('error', String(err?.message ?? err), t.n);
    }
  }

  /** One tool call of the model, through the door every agent goes through. */
  async function runCall(c, agent, t) {
    const callId = `${id}-${nextCall++}`;
    const line = { callId, tool: c.name, words: argumentsInWords(c.input), state: 'queued', outcome: null, ms: null, turn: t.n };
    toolLines.set(callId, line);
    emit({ type: 'call', line });
    const started = now();
    let content;
    let isError = false;
    try {
      const result = await handle({ id: callId, tool: c.name, args: c.input ?? {}, agent, connection, turn: t.n });
      content = resultText(result);
      line.outcome = 'done';
    } catch (err) {
      content = String(err?.message ?? err);
      isError = true;
      line.outcome = err?.outcome ? `not run: ${err.outcome}` : `failed: ${content}`;
    }
    line.state = 'ended';
    line.ms = now() - started;
    t.sent.results++;
    talk.toolResult({ callId: c.id, name: c.name, content, isError, ms: line.ms }, t.n);
    emit({ type: 'call', line });
  }

  function footerOf(t) {
    const provider = offered[providerId];
    const parts = [];
    if (t.sent.calls || t.sent.summary) {
      parts.push(`Sent to ${provider.name} (${hostOf(provider.origin)}): the conversation so far${t.sent.results ? `, ${t.sent.results} tool result${t.sent.results === 1 ? '' : 's'}` : ''}, the tools’ descriptions and the instructions, in ${t.sent.calls + (t.sent.summary ? 1 : 0)} call${t.sent.calls + (t.sent.summary ? 1 : 0) === 1 ? '' : 's'}${t.sent.summary ? ' (one made a summary)' : ''}.`);
      if (dataKeptOut()) parts.push('The data switch was on: values and pictures were kept out.');
    } else parts.push('Nothing left the browser.');
    return parts.join(' ');
  }

  function readQuestion(input) {
    const question = typeof input?.question === 'string' ? input.question.trim() : '';
    const choices = Array.isArray(input?.choices) ? input.choices.filter((c) => typeof c === 'string' && c.trim()).map((c) => c.trim().slice(0, 200)) : [];
    if (!question || choices.length < 2 || choices.length > 5 || choices.length !== input.choices.length || new Set(choices).size !== choices.length) return null;
    return Object.freeze({ question: question.slice(0, 1000), choices: Object.freeze(choices) });
  }

  function keyName(pid) {
    return `${KEY_PREFIX}:${app}:${pid}`;
  }
  function keyOf(pid) {
    return read(session, keyName(pid)) || read(local, keyName(pid)) || null;
  }
  function readSettings() {
    try {
      const v = JSON.parse(read(local, settingsKey) || '{}');
      return v && typeof v === 'object' ? v : {};
    } catch {
      return {};
    }
  }
  function saveSettings() {
    write(local, settingsKey, JSON.stringify({ provider: providerId, model: modelId, budget: talk.budget }));
  }
  return chat;
}

function read(storage, name) {
  try {
    return storage?.getItem(name) ?? null;
  } catch {
    return null;
  }
}
function write(storage, name, value) {
  try {
    storage?.setItem(name, value);
  } catch {
    /* a storage that refuses: the key lasts as long as nothing else holds it */
  }
}
function remove(storage, name) {
  try {
    storage?.removeItem(name);
  } catch {
    /* as above */
  }
}
