// The played model providers: a local HTTP server per provider answering in that provider's
// documented wire format (Anthropic's Messages API, OpenAI's Responses API), so the chat's real
// provider modules run against it with only their origin changed. No network: loopback only.
//
//   const played = await playProvider('anthropic');      // or 'openai'
//   played.script({ answer: [{ text: 'Hello' }, { tool: { name: 'items_delete', input: { ids: [1] } } }], stop: 'tool' });
//   played.script({ status: 429, retryAfter: '1' });     // then an answer, a cut stream, malformed JSON…
//   createAnthropic({ origin: played.origin });
//   played.requests                                      // every request: method, path, headers, body, aborted
//
// A scripted item is one answer to one model call, in order (a function of the request gives
// one from what was sent): `answer` (parts: {text} or {tool: {name, input, id?}}), `stop`
// ('end', 'tool', 'length', 'refusal'), `usage` ({input, output}), `chunk` (characters a text
// delta, default 4), `delayMs` between events, `cutAfter` (events sent before the stream just
// ends), `malformedAt` (the event sent as a data line that is not JSON), `hold` (a promise
// awaited after `holdAfter` events, default 4); or an HTTP failure: `status`, `retryAfter`,
// `type`/`code`, `message`. With nothing scripted a call is answered "played".
import http from 'node:http';

/** The key the played providers take (any other is refused with 401). */
export const PLAYED_KEY = 'sk-played-0123456789abcdef';
/** The models each played provider lists. */
export const PLAYED_MODELS = Object.freeze({
  anthropic: [{ id: 'claude-played-1', display_name: 'Claude Played 1' }, { id: 'claude-played-2', display_name: 'Claude Played 2' }],
  openai: [{ id: 'gpt-played-1' }, { id: 'text-embedding-played' }],
});

const ANTHROPIC_ERRORS = { 400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error', 503: 'overloaded_error' };
const OPENAI_CODES = { 401: 'invalid_api_key', 404: 'model_not_found', 429: 'rate_limit_exceeded', 500: 'server_error', 503: 'server_is_overloaded' };
const ANTHROPIC_STOPS = { end: 'end_turn', tool: 'tool_use', length: 'max_tokens', refusal: 'refusal' };

/** A played provider of `kind` ('anthropic' or 'openai') on a free loopback port. */
export async function playProvider(kind, { keys = [PLAYED_KEY], models = PLAYED_MODELS[kind], plainModels = [] } = {}) {
  if (kind !== 'anthropic' && kind !== 'openai') throw new Error(`No played provider “${kind}”.`);
  const queue = [];
  const requests = [];
  const waiters = [];
  const sockets = new Set();
  const server = http.createServer(async (req, res) => {
    const cors = { 'access-control-allow-origin': req.headers.origin || '*', 'access-control-expose-headers': 'retry-after, request-id', vary: 'origin' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': req.headers['access-control-request-headers'] || '', 'access-control-max-age': '600' });
      return res.end();
    }
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    const url = new URL(req.url, 'http://played');
    const entry = { method: req.method, path: url.pathname, query: url.search, headers: { ...req.headers }, body, aborted: false, ended: false };
    requests.push(entry);
    res.on('close', () => {
      if (!res.writableFinished) entry.aborted = true;
      entry.ended = true;
      for (const w of waiters.splice(0)) w();
    });
    for (const w of waiters.splice(0)) w();
    const fail = (status, item = {}) => {
      const headers = { ...cors, 'content-type': 'application/json' };
      if (item.retryAfter != null) headers['retry-after'] = String(item.retryAfter);
      res.writeHead(status, headers);
      const message = item.message ?? `played failure ${status}`;
      if (kind === 'anthropic') res.end(JSON.stringify({ type: 'error', error: { type: item.type ?? ANTHROPIC_ERRORS[status] ?? 'api_error', message }, request_id: 'req_played' }));
      else res.end(JSON.stringify({ error: { message, type: item.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'), param: item.param ?? null, code: item.code ?? OPENAI_CODES[status] ?? null } }));
    };
    // Anthropic refuses a call from a browser page that did not ask for direct browser access.
    if (kind === 'anthropic' && req.headers.origin && req.headers['anthropic-dangerous-direct-browser-access'] !== 'true') {
      return fail(401, { message: "CORS requests must set 'anthropic-dangerous-direct-browser-access' header" });
    }
    const key = kind === 'anthropic' ? req.headers['x-api-key'] : String(req.headers.authorization || '').replace(/^Bearer /, '');
    if (!keys.includes(key)) return fail(401, { message: kind === 'anthropic' ? 'invalid x-api-key' : 'Incorrect API key provided.' });
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      if (kind === 'anthropic') return res.end(JSON.stringify({ data: models.map((m) => ({ type: 'model', created_at: '2026-01-01T00:00:00Z', ...m })), has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null }));
      return res.end(JSON.stringify({ object: 'list', data: models.map((m) => ({ object: 'model', created: 1767225600, owned_by: 'played', ...m })) }));
    }
    const path = kind === 'anthropic' ? '/v1/messages' : '/v1/responses';
    if (req.method !== 'POST' || url.pathname !== path) return fail(404, { message: `no route ${req.method} ${url.pathname}` });
    if (kind === 'anthropic' && req.headers['anthropic-version'] !== '2023-06-01') return fail(400, { message: 'anthropic-version: the played API speaks 2023-06-01' });
    if (kind === 'openai' && body?.store !== false) return fail(400, { message: 'the played API expects store: false' });
    // As OpenAI documents: a model that does not reason has no encrypted reasoning to include;
    // with store: false a reasoning item is known only by its encrypted content, never its id.
    if (kind === 'openai' && plainModels.includes(body?.model) && body?.include?.includes('reasoning.encrypted_content')) return fail(400, { message: 'Encrypted content is not supported with this model.', param: 'include' });
    const lost = kind === 'openai' && Array.isArray(body?.input) ? body.input.find((x) => x?.type === 'reasoning' && typeof x.encrypted_content !== 'string') : null;
    if (lost) return fail(400, { message: `Item with id '${lost.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.` });
    let item = queue.shift() ?? { answer: [{ text: 'played' }] };
    if (typeof item === 'function') item = await item(entry);
    if (item.status) return fail(item.status, item);
    res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events = kind === 'anthropic' ? anthropicEvents(item, body) : openaiEvents(item, body);
    const holdAfter = item.holdAfter ?? 4;
    for (let i = 0; i < events.length; i++) {
      if (res.destroyed) return;
      if (item.cutAfter === i) return res.destroy();
      if (item.hold && i === holdAfter) await item.hold;
      if (res.destroyed) return;
      const [event, data] = events[i];
      // Each event flushed before the next, so a cut stream is cut after what was sent.
      await new Promise((r) => res.write(`event: ${event}\ndata: ${item.malformedAt === i ? '{"type": "' + event + '", broken' : JSON.stringify(data)}\n\n`, r));
      if (item.delayMs) await new Promise((r) => setTimeout(r, item.delayMs));
    }
    res.end();
  });
  server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    kind,
    origin,
    requests,
    /** Adds scripted answers, one per model call, in order. */
    script(...items) {
      queue.push(...items);
    },
    /** Drops the answers scripted and not yet given. */
    clear() {
      queue.length = 0;
    },
    /** The answers scripted and not yet given. */
    pending() {
      return queue.length;
    },
    /** Resolves once `test(requests)` holds (checked on each request and each request's end). */
    async until(test, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!test(requests)) {
        if (Date.now() > deadline) throw new Error(`played ${kind}: waited ${ms} ms for a request`);
        await new Promise((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    /** The model calls received (not the model listings). */
    calls() {
      return requests.filter((r) => r.method === 'POST');
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

function pieces(text, size) {
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

function stopOf(item) {
  return item.stop ?? (item.answer?.some((p) => p.tool) ? 'tool' : 'end');
}

function outputTokens(item) {
  return item.usage?.output ?? Math.max(1, Math.ceil(JSON.stringify(item.answer ?? []).length / 4));
}

function inputTokens(item, body) {
  return item.usage?.input ?? Math.max(1, Math.ceil(JSON.stringify(body ?? {}).length / 4));
}

/** An answer as the Messages API streams it. */
function anthropicEvents(item, body) {
  const size = item.chunk ?? 4;
  const ev = [['message_start', { type: 'message_start', message: { id: 'msg_played', type: 'message', role: 'assistant', model: body?.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens(item, body), output_tokens: 1 } } }], ['ping', { type: 'ping' }]];
  (item.answer ?? []).forEach((part, index) => {
    if (part.text != null) {
      ev.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (const t of pieces(part.text, size)) ev.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }]);
    } else {
      const id = part.tool.id ?? `toolu_played_${index}`;
      ev.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: part.tool.name, input: {} } }]);
      const json = part.tool.raw ?? JSON.stringify(part.tool.input ?? {});
      for (const p of pieces(json, Math.max(1, Math.ceil(json.length / 3)))) ev.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } }]);
    }
    ev.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  ev.push(['message_delta', { type: 'message_delta', delta: { stop_reason: ANTHROPIC_STOPS[stopOf(item)] ?? 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens(item) } }]);
  ev.push(['message_stop', { type: 'message_stop' }]);
  return ev;
}

/** An answer as the Responses API streams it. */
function openaiEvents(item, body) {
  const size = item.chunk ?? 4;
  let seq = 0;
  const e = (type, data) => [type, { type, sequence_number: seq++, ...data }];
  const response = (status, extra = {}) => ({ id: 'resp_played', object: 'response', status, model: body?.model, output: [], store: false, ...extra });
  const ev = [e('response.created', { response: response('in_progress') }), e('response.in_progress', { response: response('in_progress') })];
  (item.answer ?? []).forEach((part, output_index) => {
    if (part.reasoning != null) {
      // A reasoning item: its content encrypted only when the request included it.
      const id = `rs_played_${output_index}`;
      ev.push(e('response.output_item.added', { output_index, item: { id, type: 'reasoning', summary: [] } }));
      ev.push(e('response.output_item.done', { output_index, item: { id, type: 'reasoning', summary: [], encrypted_content: body?.include?.includes('reasoning.encrypted_content') ? part.reasoning : null } }));
    } else if (part.text != null) {
      const item_id = `msg_played_${output_index}`;
      ev.push(e('response.output_item.added', { output_index, item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }));
      ev.push(e('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
      for (const t of pieces(part.text, size)) ev.push(e('response.output_text.delta', { item_id, output_index, content_index: 0, delta: t }));
      ev.push(e('response.output_text.done', { item_id, output_index, content_index: 0, text: part.text }));
      ev.push(e('response.content_part.done', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: part.text, annotations: [] } }));
      ev.push(e('response.output_item.done', { output_index, item: { id: item_id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [] }] } }));
    } else {
      const item_id = `fc_played_${output_index}`;
      const call_id = part.tool.id ?? `call_played_${output_index}`;
      const json = part.tool.raw ?? JSON.stringify(part.tool.input ?? {});
      ev.push(e('response.output_item.added', { output_index, item: { id: item_id, type: 'function_call', status: 'in_progress', call_id, name: part.tool.name, arguments: '' } }));
      for (const p of pieces(json, Math.max(1, Math.ceil(json.length / 3)))) ev.push(e('response.function_call_arguments.delta', { item_id, output_index, delta: p }));
      ev.push(e('response.function_call_arguments.done', { item_id, output_index, arguments: json }));
      ev.push(e('response.output_item.done', { output_index, item: { id: item_id, type: 'function_call', status: 'completed', call_id, name: part.tool.name, arguments: json } }));
    }
  });
  const usage = { input_tokens: inputTokens(item, body), output_tokens: outputTokens(item), total_tokens: inputTokens(item, body) + outputTokens(item) };
  const stop = stopOf(item);
  if (stop === 'length' || stop === 'refusal') ev.push(e('response.incomplete', { response: response('incomplete', { usage, incomplete_details: { reason: stop === 'length' ? 'max_output_tokens' : 'content_filter' } }) }));
  else ev.push(e('response.completed', { response: response('completed', { usage }) }));
  return ev;
}
