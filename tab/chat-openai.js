// The chat bar's OpenAI provider: the Responses API called from the browser with the person's
// key (`Authorization: Bearer`), `store: false` (OpenAI keeps no copy of the conversation: the
// chat sends it whole each time), the answer streamed (server-sent events), the models listed
// from the API. The contract: ./chat-provider.js.
//
// Reasoning models: with `store: false` their reasoning items are kept by no one, so each call
// asks for them encrypted (`include: ['reasoning.encrypted_content']`, the documented way) and
// sends them back in the input as they came, before the calls they led to. A model that is not
// a reasoning model refuses that `include` (400, `param: 'include'`): the call is made once
// more without it, and that model is not asked for it again. No list of models is kept.

import { ProviderError, failureOfResponse, reach, serverEvents, toolInput } from './chat-provider.js';

/** Where the API is, unless the app or the person sets another origin (a company's proxy). */
export const OPENAI_ORIGIN = 'https://api.openai.com';
/** The window assumed of a model (the listing says nothing of it). */
export const OPENAI_WINDOW = 128_000;
/** The most tokens of one answer, unless the chat says otherwise. */
export const OPENAI_MAX_TOKENS = 4096;
/** What a call asks for with `store: false`, so that a reasoning model's items can go back. */
export const OPENAI_INCLUDE = Object.freeze(['reasoning.encrypted_content']);
/** Models the listing has that answer no text (embeddings, speech, pictures, moderation): not offered. */
const NOT_TEXT = /embedding|whisper|tts|transcribe|dall-e|image|moderation|audio|realtime|search|davinci|babbage/i;

const CODE_KINDS = { invalid_api_key: 'key', insufficient_quota: 'quota', rate_limit_exceeded: 'rate', model_not_found: 'model', context_length_exceeded: 'long', server_error: 'busy', server_is_overloaded: 'busy', slow_down: 'busy' };

/** The kind of an OpenAI error body (`{error: {message, type, code}}`), or null. */
export function openaiKind(status, body) {
  const error = body?.error ?? body;
  const code = error?.code;
  if (CODE_KINDS[code]) return CODE_KINDS[code];
  if (error?.type === 'insufficient_quota') return 'quota';
  if (status === 400 && /context length|too long|maximum context/i.test(String(error?.message ?? ''))) return 'long';
  if (status === 404 && /model/i.test(String(error?.message ?? ''))) return 'model';
  return null;
}

/**
 * The wait an OpenAI 429's message asks for ("… Please try again in 10.384s." or "in 120ms"),
 * in ms, or null: read when the browser cannot read `retry-after` (whether OpenAI's CORS exposes
 * it is not documented).
 */
export function openaiWaitMs(body) {
  const m = /try again in (\d+(?:\.\d+)?)(ms|s)\b/i.exec(String(body?.error?.message ?? ''));
  if (!m) return null;
  return Math.ceil(Number(m[1]) * (m[2].toLowerCase() === 'ms' ? 1 : 1000));
}

/** The conversation's provider-neutral messages as the Responses API's input items. */
export function openaiInput(messages) {
  const items = [];
  for (const m of messages) {
    let text = [];
    const flush = () => {
      if (text.length) items.push({ role: m.role, content: text.join('\n\n') });
      text = [];
    };
    for (const p of m.parts) {
      if (p.type === 'text') text.push(p.text);
      else if (p.type === 'reasoning') {
        // Only OpenAI's own, and only encrypted: with store: false an item's id alone is unknown to the API.
        flush();
        if (p.provider === 'openai' && typeof p.item?.encrypted_content === 'string') items.push({ type: 'reasoning', id: p.item.id, summary: Array.isArray(p.item.summary) ? p.item.summary : [], encrypted_content: p.item.encrypted_content });
      } else {
        flush();
        if (p.type === 'tool_call') items.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: JSON.stringify(p.input ?? {}) });
        else items.push({ type: 'function_call_output', call_id: p.id, output: p.isError ? `Error: ${p.content}` : p.content });
      }
    }
    flush();
  }
  return items;
}

/** An OpenAI provider (`origin` settable; `fetch` for tests). */
export function createOpenAI({ origin = OPENAI_ORIGIN, fetch: fetchFn = (...a) => globalThis.fetch(...a) } = {}) {
  /** Models that refused `include` (not reasoning models): not asked for it again. */
  const plain = new Set();
  const provider = {
    id: 'openai',
    name: 'OpenAI',
    origin: String(origin).replace(/\/+$/, ''),
    headers(key) {
      return { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    },
    async models({ key, signal }) {
      const response = await reach(fetchFn, `${provider.origin}/v1/models`, { headers: provider.headers(key), signal });
      if (!response.ok) throw await failureOfResponse(response, openaiKind, openaiWaitMs);
      let body;
      try {
        body = await response.json();
      } catch {
        throw new ProviderError('unreadable', { detail: 'the model list is not JSON' });
      }
      return (Array.isArray(body?.data) ? body.data : [])
        .filter((m) => typeof m?.id === 'string' && !NOT_TEXT.test(m.id))
        .map((m) => ({ id: m.id, name: m.id, window: Number(m.context_window) || OPENAI_WINDOW }))
        .sort((a, b) => a.id.localeCompare(b.id));
    },
    async *stream({ key, model, instructions, messages, tools = [], maxTokens = OPENAI_MAX_TOKENS, signal }) {
      const body = { model, input: openaiInput(messages), stream: true, store: false, max_output_tokens: maxTokens };
      if (instructions) body.instructions = instructions;
      if (tools.length) body.tools = tools.map((t) => ({ type: 'function', name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' }, strict: false }));
      const post = () => reach(fetchFn, `${provider.origin}/v1/responses`, { method: 'POST', headers: provider.headers(key), body: JSON.stringify(body), signal });
      if (!plain.has(model)) body.include = OPENAI_INCLUDE;
      let response = await post();
      if (!response.ok && body.include) {
        const failure = await failureOfResponse(response, openaiKind, openaiWaitMs);
        if (failure.status !== 400 || failure.param !== 'include') throw failure;
        // Not a reasoning model: it has no reasoning to send back.
        plain.add(model);
        delete body.include;
        response = await post();
      }
      if (!response.ok) throw await failureOfResponse(response, openaiKind, openaiWaitMs);
      const calls = new Map();
      let called = false;
      let refused = false;
      for await (const { event, data } of serverEvents(response, signal)) {
        const type = data?.type ?? event;
        if (type === 'response.output_text.delta' && data.delta) yield { type: 'text', text: String(data.delta) };
        else if (type === 'response.refusal.delta' && data.delta) {
          refused = true;
          yield { type: 'text', text: String(data.delta) };
        } else if (type === 'response.output_item.done' && data.item?.type === 'reasoning') {
          if (typeof data.item.encrypted_content === 'string') yield { type: 'reasoning', item: { type: 'reasoning', id: data.item.id, summary: Array.isArray(data.item.summary) ? data.item.summary : [], encrypted_content: data.item.encrypted_content } };
        } else if (type === 'response.output_item.added' && data.item?.type === 'function_call') {
          calls.set(data.item.id ?? data.output_index, { id: data.item.call_id, name: data.item.name, args: String(data.item.arguments ?? '') });
        } else if (type === 'response.function_call_arguments.delta') {
          const c = calls.get(data.item_id ?? data.output_index);
          if (c) c.args += String(data.delta ?? '');
        } else if (type === 'response.output_item.done' && data.item?.type === 'function_call') {
          const c = calls.get(data.item.id ?? data.output_index) ?? {};
          const id = data.item.call_id ?? c.id;
          const name = data.item.name ?? c.name;
          if (typeof id !== 'string' || typeof name !== 'string') throw new ProviderError('unreadable', { detail: 'a function call without its call_id or name' });
          called = true;
          yield { type: 'tool_call', id, name, input: toolInput(typeof data.item.arguments === 'string' ? data.item.arguments : c.args) };
        } else if (type === 'response.completed' || type === 'response.incomplete') {
          const u = data.response?.usage ?? {};
          const usage = { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0 };
          const reason = data.response?.incomplete_details?.reason;
          const stop = type === 'response.incomplete' ? (reason === 'content_filter' ? 'refusal' : reason === 'max_output_tokens' ? 'length' : 'other') : refused ? 'refusal' : called ? 'tool' : 'end';
          yield { type: 'done', stop, usage };
          return;
        } else if (type === 'response.failed' || type === 'error') {
          const error = data.response?.error ?? data.error ?? data;
          throw new ProviderError(CODE_KINDS[error?.code] ?? 'busy', { detail: error?.message });
        }
      }
      throw new ProviderError('unreadable', { detail: 'the stream ended before response.completed' });
    },
  };
  return provider;
}
