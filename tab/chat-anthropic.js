// The chat bar's Anthropic provider: the Messages API called from the browser with the
// person's key (`x-api-key`, and the header Anthropic asks of a call made from a browser), the
// answer streamed (server-sent events), the models listed from the API. The `anthropic-version`
// is pinned to the one this was written for: 2026-10-21 refuses `temperature`, `top_p` and
// `top_k` and changes the messages' rules, so moving to it is a change of this file, tested.
// The contract: ./chat-provider.js.

import { ProviderError, failureOfResponse, reach, serverEvents, toolInput } from './chat-provider.js';

/** The API version this module speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Where the API is, unless the app or the person sets another origin (a company's proxy). */
export const ANTHROPIC_ORIGIN = 'https://api.anthropic.com';
/** The window assumed of a model the listing says nothing of. */
export const ANTHROPIC_WINDOW = 200_000;
/** The most tokens of one answer, unless the chat says otherwise (the API requires a number). */
export const ANTHROPIC_MAX_TOKENS = 4096;

const STOPS = { end_turn: 'end', stop_sequence: 'end', tool_use: 'tool', max_tokens: 'length', model_context_window_exceeded: 'length', refusal: 'refusal' };
const ERROR_KINDS = { authentication_error: 'key', permission_error: 'permission', billing_error: 'quota', not_found_error: 'model', request_too_large: 'long', rate_limit_error: 'rate', overloaded_error: 'busy', api_error: 'busy', timeout_error: 'busy' };

/** The kind of an Anthropic error body (`{type: 'error', error: {type, message}}`), or null. */
export function anthropicKind(status, body) {
  const error = body?.error;
  const message = String(error?.message ?? '');
  if (error?.type === 'invalid_request_error') {
    if (/prompt is too long|too many tokens|context window/i.test(message)) return 'long';
    if (/credit balance/i.test(message)) return 'quota';
    if (/model/i.test(message) && status === 404) return 'model';
    return 'bad';
  }
  return ERROR_KINDS[error?.type] ?? null;
}

/** The conversation's provider-neutral messages as the Messages API's. */
export function anthropicMessages(messages) {
  // Another provider's reasoning items are its own: left out.
  return messages.map((m) => ({
    role: m.role,
    content: m.parts.filter((p) => p.type !== 'reasoning').map((p) => {
      if (p.type === 'text') return { type: 'text', text: p.text };
      if (p.type === 'tool_call') return { type: 'tool_use', id: p.id, name: p.name, input: p.input ?? {} };
      return { type: 'tool_result', tool_use_id: p.id, content: p.content, is_error: Boolean(p.isError) };
    }),
  }));
}

/** An Anthropic provider (`origin` settable; `fetch` for tests). */
export function createAnthropic({ origin = ANTHROPIC_ORIGIN, fetch: fetchFn = (...a) => globalThis.fetch(...a) } = {}) {
  const provider = {
    id: 'anthropic',
    name: 'Anthropic',
    origin: String(origin).replace(/\/+$/, ''),
    headers(key) {
      return { 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION, 'anthropic-dangerous-direct-browser-access': 'true', 'content-type': 'application/json' };
    },
    async models({ key, signal }) {
      const out = [];
      let after = '';
      for (let page = 0; page < 10; page++) {
        const response = await reach(fetchFn, `${provider.origin}/v1/models?limit=100${after ? `&after_id=${encodeURIComponent(after)}` : ''}`, { headers: provider.headers(key), signal });
        if (!response.ok) throw await failureOfResponse(response, anthropicKind);
        let body;
        try {
          body = await response.json();
        } catch {
          throw new ProviderError('unreadable', { detail: 'the model list is not JSON' });
        }
        for (const m of Array.isArray(body?.data) ? body.data : []) {
          if (typeof m?.id === 'string') out.push({ id: m.id, name: typeof m.display_name === 'string' ? m.display_name : m.id, window: Number(m.max_input_tokens) || ANTHROPIC_WINDOW });
        }
        if (!body?.has_more || !body.last_id) break;
        after = body.last_id;
      }
      return out;
    },
    async *stream({ key, model, instructions, messages, tools = [], maxTokens = ANTHROPIC_MAX_TOKENS, signal }) {
      const body = { model, max_tokens: maxTokens, stream: true, messages: anthropicMessages(messages) };
      if (instructions) body.system = instructions;
      if (tools.length) body.tools = tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema ?? { type: 'object' } }));
      const response = await reach(fetchFn, `${provider.origin}/v1/messages`, { method: 'POST', headers: provider.headers(key), body: JSON.stringify(body), signal });
      if (!response.ok) throw await failureOfResponse(response, anthropicKind);
      const usage = { input: 0, output: 0 };
      const blocks = new Map();
      let stop = 'other';
      for await (const { event, data } of serverEvents(response, signal)) {
        if (event === 'message_start') {
          const u = data?.message?.usage ?? {};
          usage.input = (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
          usage.output = u.output_tokens ?? 0;
          yield { type: 'usage', usage: { ...usage } };
        } else if (event === 'content_block_start') {
          const b = data?.content_block;
          blocks.set(data?.index, { type: b?.type, id: b?.id, name: b?.name, json: '' });
        } else if (event === 'content_block_delta') {
          const d = data?.delta;
          if (d?.type === 'text_delta' && d.text) yield { type: 'text', text: String(d.text) };
          else if (d?.type === 'input_json_delta') {
            const b = blocks.get(data.index);
            if (b) b.json += String(d.partial_json ?? '');
          }
        } else if (event === 'content_block_stop') {
          const b = blocks.get(data?.index);
          if (b?.type === 'tool_use') {
            if (typeof b.id !== 'string' || typeof b.name !== 'string') throw new ProviderError('unreadable', { detail: 'a tool call without its id or name' });
            yield { type: 'tool_call', id: b.id, name: b.name, input: toolInput(b.json) };
          }
        } else if (event === 'message_delta') {
          if (data?.delta?.stop_reason) stop = STOPS[data.delta.stop_reason] ?? 'other';
          if (data?.usage?.output_tokens != null) usage.output = data.usage.output_tokens;
          if (data?.usage?.input_tokens != null) usage.input = data.usage.input_tokens;
          yield { type: 'usage', usage: { ...usage } };
        } else if (event === 'message_stop') {
          yield { type: 'done', stop, usage: { ...usage } };
          return;
        } else if (event === 'error') {
          const kind = ERROR_KINDS[data?.error?.type] ?? 'busy';
          throw new ProviderError(kind, { detail: data?.error?.message });
        }
      }
      // The stream ended without message_stop: the answer was cut.
      throw new ProviderError('unreadable', { detail: 'the stream ended before message_stop' });
    },
  };
  return provider;
}
