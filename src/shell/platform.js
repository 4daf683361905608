// The platform's APIs the Rust shell (src/shell/mod.rs) calls: worker's wrappers of them
// (bindings, stubs, requests, the SQL cursor, alarm times: their conversions and checks) cost
// KiBs of wasm, so the shell reaches them through these few functions, named as Rust names
// them (no js_name to map each).
function object(env, binding, name) {
  const objects = env[binding];
  return objects.get(objects.idFromName(name));
}
// An object's answer: its stream when its content type is `streamed`, else its body's bytes;
// null for any status but 200.
export async function post_object(env, binding, name, body, streamed) {
  const response = await object(env, binding, name).fetch('https://object/', { method: 'POST', body });
  if (response.status !== 200) return null;
  if (response.headers.get('content-type') === streamed) return response.body;
  return new Uint8Array(await response.arrayBuffer());
}
// A request's headers in one crossing: a line `name:value` each (lowercase names, each once,
// as Headers holds them; no value holds a line break).
export function header_lines(req) {
  let lines = '';
  for (const [name, value] of req.headers) lines += `${name}:${value}\n`;
  return lines;
}
export async function pass_object(env, binding, name, request) {
  return object(env, binding, name).fetch(request);
}
export function say_unbound(env, bindings, line) {
  for (const name of bindings.split(' ')) if (!env[name]) console.error(line, name);
}
export async function ask_limit(env, binding, key) {
  // null: no such binding (said once at start); undefined: it failed.
  if (!env[binding]) return null;
  try {
    const { success } = await env[binding].limit({ key });
    return typeof success === 'boolean' ? success : undefined;
  } catch {
    return undefined;
  }
}
export function sql_rows(state, query, bindings) {
  // Each row as its values in column order (raw: two columns of one name stay two).
  return Array.from(state.storage.sql.exec(query, ...bindings).raw());
}
export async function set_alarm(state, at) {
  await state.storage.setAlarm(at);
}
export function answer_pings(state, ping, pong) {
  try {
    state.setWebSocketAutoResponse(new WebSocketRequestResponsePair(ping, pong));
  } catch {
    // Ignored (as it was): without it, pings reach the object as messages.
  }
}
export async function delete_all(state) {
  await state.storage.deleteAll();
}

// Sets headers written as lines `name:value` (http::header_text) on a response the relay made.
export function set_header_lines(response, lines) {
  for (const line of lines.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) response.headers.set(line.slice(0, colon), line.slice(colon + 1));
  }
}
// A response the relay made: `body` null, bytes or a stream; its headers set by the shell.
export function new_response(status, body) {
  return new Response(body, { status });
}
// A tab's socket: its server end accepted by the object (hibernatable), and the response that
// hands the client end over.
export function accept_socket(state) {
  const [client, server] = Object.values(new WebSocketPair());
  state.acceptWebSocket(server);
  return [new Response(null, { status: 101, webSocket: client }), server];
}
// A socket accepted only to be closed with `code` and `reason` (a browser shows nothing else).
export function refuse_socket(code, reason) {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.close(code, reason);
  return new Response(null, { status: 101, webSocket: client });
}

// A streamed response's body, pulled from the shell's Body one chunk at a time; when the client
// stops reading, the Body is freed (and with it what it waited for).
export function stream_of(body) {
  return new ReadableStream({
    async pull(controller) {
      const chunk = await body.next();
      if (chunk !== undefined) return controller.enqueue(chunk);
      controller.close();
      body.free();
    },
    cancel() {
      body.free();
    },
  });
}
// A body read chunk by chunk (no body: an empty one); a reader dropped early cancels the rest.
export function reader_of(body) {
  return body?.getReader();
}
export async function next_chunk(reader) {
  const { done, value } = (await reader?.read()) ?? { done: true };
  return done ? undefined : value;
}
export function cancel_read(reader) {
  reader?.cancel().catch(() => {});
}

// A client metadata document: fetched without following redirects, and kept in the Workers cache.
export async function fetch_document(url, signal) {
  return fetch(url, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
}
export async function cached_text(key) {
  const hit = await caches.default.match(key);
  return hit === undefined ? undefined : hit.text();
}
export async function keep(key, response) {
  await caches.default.put(key, response);
}

// The tab proof's signature, checked by the runtime's WebCrypto.
export async function verify_p256(key, signature, data) {
  // Views of the wasm memory: copied before the first await, which may see it reused.
  [key, signature, data] = [key.slice(), signature.slice(), data.slice()];
  try {
    const k = await crypto.subtle.importKey('raw', key, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, k, signature, data);
  } catch {
    return false;
  }
}
