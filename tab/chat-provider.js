// What every model provider of the chat bar shares: the contract a provider module keeps, the
// kinds of failure with one sentence each that says what to do, the reading of a server-sent
// event stream, and one model call with its retries (rate-limited and busy waited out, the
// provider's `retry-after` honoured; an unreadable answer asked for once more; the budget
// checked before each retry). No DOM; it runs in Node and in browsers.
//
// A provider (./chat-anthropic.js, ./chat-openai.js) is an object:
//   { id, name, origin,                                   // origin: settable (tests, a company's proxy)
//     models({ key, signal }) -> [{ id, name, window }],  // listed from the provider's API
//     stream({ key, model, instructions, messages, tools, maxTokens, signal }) -> async iterable of
//       { type: 'text', text } | { type: 'tool_call', id, name, input } | { type: 'usage', usage }
//       | { type: 'reasoning', item }                     // the provider's own, sent back to it as is
//       | { type: 'done', stop, usage }                   // stop: one of the conversation's STOPS
//   }
// Both throw a ProviderError (its `kind` one of FAILURE_KINDS) for what went wrong, and let an
// AbortError through when the signal aborts. The key goes in a header to `origin` only.

/** The kinds of failure, each with the one sentence the person reads. */
export const FAILURES = Object.freeze({
  key: 'The provider refused this key: check it, or paste a new one.',
  permission: 'This key is not permitted to do this: check its permissions in the provider’s console, or use another key.',
  quota: 'This key’s account is out of credit or quota: add credit with the provider, or use another key.',
  rate: 'The provider is limiting how often this key may call, and did not let it through after waiting: try again in a minute.',
  busy: 'The provider is busy and did not answer after waiting: try again in a few minutes.',
  network: 'The provider could not be reached at its address (shown in the chat’s settings): check the connection and try again; if it stays so, tell the app’s makers.',
  unreadable: 'The provider’s answer could not be read, even when asked for once more: try again.',
  model: 'The provider has no such model for this key: choose another one.',
  long: 'The conversation is too long for this model: choose a model with a larger window, or reload the page for a new chat (Export as Markdown first to keep this one).',
  bad: 'The provider refused the request as malformed: try another model, or tell the app’s makers.',
});
/** The kinds of failure. */
export const FAILURE_KINDS = Object.freeze(Object.keys(FAILURES));
/** What the person reads while a rate-limited or busy provider is waited out (`{s}`: seconds). */
export const WAITING = Object.freeze({
  rate: 'The provider is limiting how often this key may call: trying again in {s} s.',
  busy: 'The provider is busy: trying again in {s} s.',
});
/** How the waits go when the provider says nothing of when to come back, and their bounds. */
export const RETRY = Object.freeze({ firstMs: 1000, factor: 2, maxWaits: 4, longestMs: 60_000 });

/** A provider's failure: `kind` (one of FAILURE_KINDS), the HTTP status, the wait it asked for. */
export class ProviderError extends Error {
  constructor(kind, { status = 0, retryAfterMs = null, detail = '' } = {}) {
    super(FAILURES[kind] || FAILURES.bad);
    this.name = 'ProviderError';
    this.kind = FAILURES[kind] ? kind : 'bad';
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    /** The provider's own words (not shown as the sentence; never holds the key). */
    this.detail = String(detail).slice(0, 300);
  }
}

/** No call made: the chat's token budget would be passed (its sentence is the message). */
export class BudgetRefusal extends Error {
  constructor(sentence) {
    super(sentence);
    this.name = 'BudgetRefusal';
  }
}

/** The wait a `retry-after` header asks for, in milliseconds (seconds or an HTTP date); null when none. */
export function retryAfterMs(value, now = Date.now()) {
  if (value == null || value === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** The kind of failure an HTTP status says when the body says nothing more specific. */
export function kindOfStatus(status) {
  if (status === 401) return 'key';
  if (status === 402) return 'quota';
  if (status === 403) return 'permission';
  if (status === 404) return 'model';
  if (status === 413) return 'long';
  if (status === 429) return 'rate';
  if (status === 408 || status >= 500) return 'busy';
  return 'bad';
}

/**
 * A ProviderError for an HTTP answer that is not a 2xx: `kindOf(status, body)` reads the
 * provider's own error; `waitOf(body)` the wait its body asks for (ms, or null), read when no
 * `retry-after` header can be (a provider whose CORS does not expose it).
 */
export async function failureOfResponse(response, kindOf, waitOf = () => null) {
  let body = null;
  try {
    body = JSON.parse(await response.text());
  } catch {
    body = null;
  }
  const kind = kindOf(response.status, body) || kindOfStatus(response.status);
  const failure = new ProviderError(kind, { status: response.status, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) ?? waitOf(body), detail: body?.error?.message ?? '' });
  /** The request's field the provider named as wrong (OpenAI's `error.param`), or null. */
  failure.param = typeof body?.error?.param === 'string' ? body.error.param : null;
  return failure;
}

/** `fetch`, with a failure to reach the provider as a ProviderError ('network'); an abort stays an abort. */
export async function reach(fetchFn, url, init) {
  try {
    return await fetchFn(url, init);
  } catch (err) {
    if (init?.signal?.aborted) throw init.signal.reason ?? err;
    throw new ProviderError('network', { detail: err?.message });
  }
}

/**
 * The events of a server-sent event stream (a fetch Response's body): {event, data} with `data`
 * parsed as JSON. A data line that is not JSON is 'unreadable'; the stream breaking off is too
 * (the provider module says when an answer ended before its end).
 */
export async function* serverEvents(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data = [];
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        throw new ProviderError('unreadable', { detail: 'the stream broke off' });
      }
      // The stream's end ends a \r held back as half of a \r\n.
      if (chunk.done && !buffer.endsWith('\r')) break;
      buffer = chunk.done ? `${buffer}\n` : buffer + decoder.decode(chunk.value, { stream: true });
      // Lines read by index, the buffer cut once a chunk (a chunk may hold hundreds of events).
      let at = 0;
      let slice = now();
      let cr = buffer.indexOf('\r');
      for (;;) {
        if (cr >= 0 && cr < at) cr = buffer.indexOf('\r', at);
        const lf = buffer.indexOf('\n', at);
        const nl = cr < 0 ? lf : lf < 0 ? cr : Math.min(lf, cr);
        // A \r last in the buffer may be half of a \r\n: wait for the next chunk.
        if (nl < 0 || (nl === cr && nl === buffer.length - 1)) break;
        const line = buffer.slice(at, nl);
        at = nl + (buffer.charCodeAt(nl) === 13 && buffer.charCodeAt(nl + 1) === 10 ? 2 : 1);
        if (line === '') {
          if (data.length) {
            const text = data.join('\n');
            let parsed;
            try {
              parsed = JSON.parse(text);
            } catch {
              throw new ProviderError('unreadable', { detail: 'an event that is not JSON' });
            }
            yield { event: event || parsed?.type || 'message', data: parsed };
            // A chunk of hundreds of events is read in slices: the page draws between them.
            if (now() - slice > SLICE_MS) {
              await pause();
              slice = now();
            }
          }
          event = '';
          data = [];
        } else if (line.charCodeAt(0) === 58) continue;
        else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
        }
      }
      buffer = buffer.slice(at);
      if (chunk.done) break;
    }
  } finally {
    reader.releaseLock?.();
  }
}

/** The longest a stream is read without letting the page draw (a long task is 50 ms). */
export const SLICE_MS = 8;
const now = () => globalThis.performance?.now() ?? Date.now();
/** Lets the event loop run (the page draws, input is handled) before the stream is read on. */
const pause = () => (globalThis.scheduler?.yield ? globalThis.scheduler.yield() : new Promise((r) => setTimeout(r, 0)));

/** A JSON object's text as the tool call's input ('' is {}); 'unreadable' when it is not one. */
export function toolInput(text) {
  if (!text) return {};
  try {
    const value = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    /* below */
  }
  throw new ProviderError('unreadable', { detail: 'a tool call’s arguments that are not a JSON object' });
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/**
 * One model call, retried as the kinds say: `request` is the provider's `stream` argument.
 * `onEvent(e)`: each text and tool call as it comes, and {type: 'restart'} before a retry (what
 * was shown of the failed answer goes); `onWait({kind, ms, sentence})` before a wait (and
 * `onWait(null)` after it); `onTried(usage, why)`: the tokens of an attempt that left no answer;
 * `beforeRetry()`: a sentence when no retry may be made (the budget), else null. Resolves with
 * {parts, stop, usage}; rejects with a ProviderError, or the signal's reason once it aborts.
 */
export async function callModel(provider, request, { onEvent = () => {}, onWait = () => {}, onTried = () => {}, beforeRetry = () => null, sleepFn = sleep, retry = RETRY } = {}) {
  const { signal } = request;
  let waits = 0;
  let askedAgain = false;
  let backoff = retry.firstMs;
  for (;;) {
    const parts = [];
    let usage = { input: 0, output: 0 };
    let shown = false;
    try {
      for await (const e of provider.stream(request)) {
        if (e.type === 'text') {
          const last = parts[parts.length - 1];
          if (last?.type === 'text') last.text += e.text;
          else parts.push({ type: 'text', text: e.text });
          shown = true;
          onEvent(e);
        } else if (e.type === 'tool_call') {
          parts.push({ type: 'tool_call', id: e.id, name: e.name, input: e.input });
          shown = true;
          onEvent(e);
        } else if (e.type === 'reasoning') parts.push({ type: 'reasoning', provider: provider.id, item: e.item });
        else if (e.type === 'usage') usage = e.usage;
        else if (e.type === 'done') return { parts, stop: e.stop, usage: e.usage ?? usage };
      }
      throw new ProviderError('unreadable', { detail: 'the answer ended before its end' });
    } catch (err) {
      if (signal?.aborted) {
        err.partial = { parts, usage };
        throw err;
      }
      if (!(err instanceof ProviderError)) throw err;
      const again = err.kind === 'unreadable' ? !askedAgain : (err.kind === 'rate' || err.kind === 'busy') && waits < retry.maxWaits;
      if (usage.input || usage.output) onTried(usage, err.kind);
      if (!again) throw err;
      const refusal = beforeRetry();
      if (refusal) throw new BudgetRefusal(refusal);
      if (shown) onEvent({ type: 'restart' });
      if (err.kind === 'unreadable') askedAgain = true;
      else {
        waits++;
        const ms = err.retryAfterMs ?? backoff;
        backoff = Math.min(backoff * retry.factor, retry.longestMs);
        if (ms > retry.longestMs) throw err;
        onWait({ kind: err.kind, ms, sentence: WAITING[err.kind].replace('{s}', String(Math.ceil(ms / 1000))) });
        try {
          await sleepFn(ms, signal);
        } finally {
          onWait(null);
        }
      }
    }
  }
}
