// The Tabrelay demo page: draws the app's data, shows the connection, the history and the
// agents' calls, approves connect codes the person types, and answers the relay's calls.
// Once a whole connect code is typed (or opened with the waiting page's link), the page asks
// the relay once who wants it and says so (how long ago and from where the request started, a
// warning when an unverified name looks like a well-known app's, in the relay's words); the
// person approves or denies the code. A code opened from a link for an unverified client is
// shown with its last characters hidden, and Approve needs them typed from the waiting page.
// The person's side comes from the tab end's presence (../presence.js) and its elements: the
// mode and each kind's Ask / Allow / Deny (deleting items is a confirm kind of this app), a
// tool asked about or refused on its own, kept in localStorage; the tab states its tools with
// what they make of each to the relay at once. A call that asks waits on the confirm card
// (Allow once, This connection, Always, Deny; oldest first; withdrawn when the agent cancels,
// the person presses Stop or the tab closes). The activity line shows each agent's turn with
// Stop, then Undo turn (the history undoes the turn's steps) and Dismiss.
// The dataset's switch "Agents see names and summaries only" (../data-guard.js) guards every
// call before the permissions. The page shows the connector address to paste, with Copy.
// The person sees the agent apps connected to this tab and forgets one with a press.
//
// The relay it pairs with is its configuration's (./config.js, written by whoever serves the
// page), never a query parameter: a link cannot point the page at another relay. Query
// parameter: ?seed=<number> (default: a random one kept in sessionStorage, so a reload shows
// the same data).

import { RelayClient, connectCodeFromFragment, catalogueTools, normalCode, maskedCode, tailMatches, lookalikeSentence, CONSENT } from '../relay-client.js';
import { createPresence, NotRun } from '../presence.js';
import { createDataSwitch, guardCall } from '../data-guard.js';
import { ago } from '../presence-elements.js';
import { CATALOGUE } from '../generated/bundle.js';
import { createDemoApp, pictureSize, PERSON, PICTURE_WIDTH_DEFAULT } from './app.js';
import { RELAY } from './config.js';

const SEED_KEY = 'tabrelay-demo:seed';
/** A tool's own choice, beside its kinds: none (its kinds decide), ask first, or refuse. */
const TOOL_CHOICES = { kinds: 'As its kinds say', ask: 'Ask me first', deny: 'Refuse' };
/** The demo's confirm kinds, per tool, and why each asks. */
const CONFIRM_KINDS = { items_delete: ['deletes-items'] };
const KIND_WORDS = { 'deletes-items': 'it deletes items (a reload loses them for good)' };
/** What a tool's calls do now, in words. */
const NOW_WORDS = { runs: 'runs without asking', asks: 'asks you first', refused: 'refused' };
const CALLS_SHOWN = 200;
const NAME_CHARS = 80;
/** What a call's agent is called when it gave no name. */
const SOME_AGENT = 'an agent';
/** Line breaks, control characters and direction marks: shown as spaces in a card. */
const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** A connect code's letters and digits (dashes and spaces aside). */
const CODE_CHARS = 10;
/** A whole code is described once typing has paused this long. */
const DESCRIBE_AFTER_MS = 300;

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

const app = createDemoApp({ seed: seedOfPage(), picture });
const relayAddress = relayOfPage();
const presence = createPresence({
  app: CATALOGUE.resource_prefix,
  tools: CATALOGUE.tools,
  confirmKinds: CONFIRM_KINDS,
  kindWords: KIND_WORDS,
  stepOf: (result) => result?.data?.step ?? null,
  undoTurn: (steps) => {
    app.undoSteps(steps, PERSON);
    relay?.step();
  },
  actionOf: (call) => actionOf(call.tool, call.args),
});
const relay = relayAddress
  ? new RelayClient({
      relay: relayAddress,
      handle,
      onStatus: showStatus,
      onCancel: (id) => presence.cancel(id),
      tools: toolsStated(),
      dataset: app.dataset.name,
      onRefused: (call) => logCall(whoOf(call), call.tool, 'refused by your settings'),
      onToolsRefused: (sentence) => {
        $('settings-result').textContent = sentence;
      },
    })
  : null;
/** The person's switch "Agents see names and summaries only", kept per dataset (its name). */
const dataSwitch = createDataSwitch({ app: CATALOGUE.resource_prefix });
dataSwitch.follow(window);
$('data-switch').dataSwitch = dataSwitch;
$('data-switch').datasetId = app.dataset.name;
$('connections').relay = relay;
presence.onAsking = (q) => relay?.asking(q.call.id, q.sentence);
presence.onAnswered = (q) => relay?.answered(q.call.id);
// Stop ends the agents' turn: the agent's next call starts a new one.
presence.onStopped = () => relay?.step();
$('confirm').presence = presence;
$('activity').presence = presence;
$('permissions').presence = presence;
/**
 * The codes described (normalized) and what the relay said: {client, host}, {sentence}, or
 * null while it is asked. Each describe is one of a code's few tries, so a code is asked once.
 */
const described = new Map();
/** The pending describe of the code being typed. */
let describeTimer = null;
/** Counts the person's Approve and Deny presses, so a late description does not talk over them. */
let decisions = 0;
/** The code requests (describe, approve, deny) one after another: the relay client keeps one per code. */
let codeTurn = Promise.resolve();
/**
 * The code opened from the waiting page's link (normalized), shown masked in the field: the
 * person confirms its last characters unless the relay says its client is verified.
 */
let linked = null;

$('dataset-name').textContent = app.dataset.name;
renderSettings();
$('settings').addEventListener('change', settingChanged);
// The person's permissions changed (here or in another tab of the demo): the list follows.
presence.store.follow(window);
presence.store.subscribe(() => {
  renderSettings();
  relay?.setTools(toolsStated());
});
// The tab closing makes every question moot.
window.addEventListener('pagehide', () => presence.withdrawAll('the tab is closing'));
document.title = `${app.dataset.name} · Tabrelay demo`;
$('relay').textContent = cut(String(RELAY));
// The connector address agents are given: the relay's bare origin.
const connectorAddress = relayAddress ? `${new URL(relayAddress).origin}/` : '';
$('connector-address').textContent = connectorAddress || 'none (the configured relay is not an http or https address)';
$('copy-address').disabled = !connectorAddress;
$('copy-address').addEventListener('click', copyAddress);
render();
app.subscribe(render);
let resizing = false;
window.addEventListener('resize', () => {
  if (resizing) return;
  resizing = true;
  requestAnimationFrame(() => {
    resizing = false;
    drawScreen();
  });
});
$('code-hint').textContent = `An agent that asks to use this tab shows a connect code on its waiting page. ${CONSENT.APPROVE_ONLY_YOURS}`;
$('code-tail-label').textContent = CONSENT.TAIL_ASK;
$('approve-form').addEventListener('submit', approve);
$('deny').addEventListener('click', deny);
$('code').addEventListener('input', () => {
  // Typing in the field leaves the linked code: a whole code typed needs no extra step.
  if (linked) {
    linked = null;
    $('code').value = '';
    showTail(false);
  }
  codeEdited(false);
});
$('undo').addEventListener('click', undo);
window.addEventListener('hashchange', offerCodeFromFragment);
offerCodeFromFragment();
if (!relay) showStatus('stopped', { reason: 'the relay address is not an http or https address' });
else if (!window.isSecureContext) showStatus('stopped', { reason: 'this page must be opened over https or from localhost' });
else relay.start();

function seedOfPage() {
  const given = params.get('seed');
  if (given) return given;
  let kept = null;
  try {
    kept = sessionStorage.getItem(SEED_KEY);
  } catch {
    // Storage may be off; the data then changes on reload.
  }
  if (kept && /^\d+$/.test(kept)) return Number(kept);
  const fresh = crypto.getRandomValues(new Uint32Array(1))[0] % 1_000_000;
  try {
    sessionStorage.setItem(SEED_KEY, String(fresh));
  } catch {
    // As above.
  }
  return fresh;
}

/** The configured relay's address, when it is an http(s) URL. */
function relayOfPage() {
  try {
    const url = new URL(RELAY);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** The catalogue's tools with what the person's permissions make of each. */
function toolsStated() {
  return catalogueTools(Object.fromEntries(CATALOGUE.tools.map((t) => [t.name, presence.settingOf(t.name)])));
}

/** One row per tool: its title and name, the tool's own choice, and what a call does now. */
function renderSettings() {
  $('settings').replaceChildren(
    ...CATALOGUE.tools.map((t) => {
      const li = document.createElement('li');
      const label = document.createElement('label');
      label.htmlFor = `setting-${t.name}`;
      label.textContent = t.title;
      const code = document.createElement('code');
      code.textContent = t.name;
      label.append(' ', code);
      const select = document.createElement('select');
      select.id = `setting-${t.name}`;
      select.dataset.tool = t.name;
      for (const [value, words] of Object.entries(TOOL_CHOICES)) select.append(new Option(words, value));
      select.value = presence.settings().tools[t.name] || 'kinds';
      const now = document.createElement('span');
      now.className = 'now';
      now.id = `now-${t.name}`;
      now.textContent = NOW_WORDS[presence.settingOf(t.name)];
      select.setAttribute('aria-describedby', now.id);
      li.append(label, select, now);
      return li;
    }),
  );
}

/** The person changed a tool's own choice: kept, and the tab states its tools again. */
function settingChanged(event) {
  const select = event.target.closest('select[data-tool]');
  if (!select) return;
  presence.store.setTool(select.dataset.tool, select.value === 'kinds' ? null : select.value);
  $('settings-result').textContent = `${select.dataset.tool} ${NOW_WORDS[presence.settingOf(select.dataset.tool)]}.`;
}

/** A call's agent as the page names it. */
function whoOf(call) {
  return typeof call.agent === 'string' && call.agent.trim() ? call.agent : SOME_AGENT;
}

/** Answers one call from an agent (after the person's Allow, if the tool asks) and logs it. */
async function handle(call) {
  const who = whoOf(call);
  // A connection made after the last list (its code was redeemed after the approve): list again.
  const connections = $('connections').list;
  if (connections && !connections.some((c) => c.id === call.connection?.id)) refreshConnections();
  try {
    // A refused tool never gets here (the relay client refuses it); the presence asks when a kind asks.
    // The dataset's switch first (a read it refuses never asks the person), then the permissions.
    const tool = CATALOGUE.tools.find((t) => t.name === call.tool);
    const result = await guardCall({ tool, dataset: app.dataset.name, dataSwitch }, () => presence.run(call, () => app.run(call.tool, call.args, who)));
    logCall(who, call.tool, 'ok');
    return result;
  } catch (err) {
    logCall(who, call.tool, err instanceof NotRun ? err.outcome : `error: ${err.message}`);
    throw err;
  }
}

/** What a destructive call would do, in words, every part from outside cut to 80 characters. */
function actionOf(tool, args) {
  const ids = tool === 'items_delete' && Array.isArray(args?.ids) ? [...new Set(args.ids)] : [];
  if (ids.length === 1) return `delete item ${shown(ids[0])}`;
  if (ids.length > 1) return `delete ${ids.length} items (ids ${shown(ids.map(shown).join(', '))})`;
  return `use ${shown(tool)} with ${shown(JSON.stringify(args ?? {}))}`;
}

/** Text from outside as the page shows it: one line, no direction marks, at most 80 characters. */
function shown(text) {
  return cut(String(text).replace(UNSHOWN, ' '));
}

/** view_picture's drawing: the plot as a base64 PNG of the size asked. */
function picture({ width, height }) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  drawPlot(canvas.getContext('2d'), width, height);
  return canvas.toDataURL('image/png');
}

function render() {
  drawScreen();
  renderLegend();
  renderHistory();
}

function drawScreen() {
  const canvas = $('plot');
  const width = Math.round(canvas.getBoundingClientRect().width) || PICTURE_WIDTH_DEFAULT;
  const { height } = pictureSize(width);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  drawPlot(ctx, width, height);
  const { items, groups, highlighted } = app.view();
  canvas.setAttribute(
    'aria-label',
    `Scatter plot of y against x: ${items} items in ${groups.length} groups, ${highlighted.count} highlighted.`,
  );
}

/** The plot as app.view() lays it out, highlighted items as HIGHLIGHT_MARKING says. */
function drawPlot(ctx, width, height) {
  const view = app.view();
  const k = Math.min(2.5, Math.max(0.7, width / PICTURE_WIDTH_DEFAULT));
  const m = { left: 44 * k, right: 12 * k, top: 12 * k, bottom: 38 * k };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const px = (v) => m.left + ((v - view.x.min) / (view.x.max - view.x.min)) * w;
  const py = (v) => m.top + h - ((v - view.y.min) / (view.y.max - view.y.min)) * h;
  const line = (x1, y1, x2, y2) => {
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x2, y2);
    ctx.stroke();
  };

  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  ctx.lineWidth = k;
  ctx.strokeStyle = '#e4e4e7';
  ctx.fillStyle = '#55555a';
  ctx.font = `${Math.round(12 * k)}px system-ui, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of view.x.ticks) {
    line(px(t), m.top, px(t), m.top + h);
    ctx.fillText(String(t), px(t), m.top + h + 4 * k);
  }
  ctx.fillText('x', m.left + w / 2, m.top + h + 20 * k);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of view.y.ticks) {
    line(m.left, py(t), m.left + w, py(t));
    ctx.fillText(String(t), m.left - 6 * k, py(t));
  }
  ctx.textAlign = 'left';
  ctx.fillText('y', 4 * k, m.top + h / 2);

  const hex = new Map(app.dataset.groups.map((g) => [g.id, g.hex]));
  const dot = (item, r) => {
    ctx.fillStyle = hex.get(item.group);
    ctx.beginPath();
    ctx.arc(px(item.x), py(item.y), r, 0, 2 * Math.PI);
    ctx.fill();
  };
  const marked = app.dataset.items.filter((i) => app.highlighted.has(i.id));
  ctx.globalAlpha = marked.length ? 0.25 : 0.85;
  for (const item of app.dataset.items) if (!app.highlighted.has(item.id)) dot(item, 3.2 * k);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = '#000';
  ctx.lineWidth = 1.6 * k;
  for (const item of marked) {
    dot(item, 5.5 * k);
    ctx.stroke();
  }

  // The legend, top right, so a picture alone says which colour is which group (unless the
  // picture is too small for it; view_picture's description names the colours too).
  const rowH = 16 * k;
  const labels = view.groups.map((g) => `${cut(g.name, 24)} (${g.count})`);
  const boxW = Math.max(...labels.map((l) => ctx.measureText(l).width)) + 28 * k;
  if (boxW > w * 0.6) return;
  const left = m.left + w - boxW - 4 * k;
  ctx.globalAlpha = 0.85;
  ctx.fillStyle = '#fff';
  ctx.fillRect(left, m.top + 4 * k, boxW, rowH * labels.length + 8 * k);
  ctx.globalAlpha = 1;
  view.groups.forEach((g, i) => {
    const y = m.top + 8 * k + rowH * (i + 0.5);
    ctx.fillStyle = g.hex;
    ctx.beginPath();
    ctx.arc(left + 10 * k, y, 4.5 * k, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = '#1d1d1f';
    ctx.fillText(labels[i], left + 20 * k, y);
  });
}

function renderLegend() {
  const list = $('legend');
  list.replaceChildren(
    ...app.view().groups.map((g) => {
      const li = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.style.background = g.hex;
      swatch.setAttribute('aria-hidden', 'true');
      li.append(swatch, `${g.name} (${g.count}, ${g.colour})`);
      return li;
    }),
  );
}

function renderHistory() {
  const list = $('history');
  list.replaceChildren(
    ...app.history.map((step) => {
      const li = document.createElement('li');
      li.value = step.step;
      li.textContent = `${step.who}: ${step.summary}${step.undone ? ' (undone)' : ''}`;
      if (step.undone) li.className = 'undone';
      return li;
    }),
  );
  list.scrollTop = list.scrollHeight;
  const next = app.undoable();
  const button = $('undo');
  button.disabled = !next;
  button.title = next ? `Undo step ${next.step}: ${next.summary}` : 'Nothing to undo';
}

function logCall(who, tool, outcome) {
  const list = $('calls');
  const li = document.createElement('li');
  const time = new Date().toLocaleTimeString([], { hour12: false });
  li.textContent = `${time} ${shown(who)} · ${shown(tool)} · ${outcome}`;
  if (outcome !== 'ok') li.className = 'error';
  list.append(li);
  while (list.children.length > CALLS_SHOWN) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function showStatus(state, detail = {}) {
  const status = $('status');
  status.dataset.state = state;
  // Only the connected state may contain the word "connected".
  switch (state) {
    case 'connected':
      status.textContent = 'connected';
      refreshConnections();
      describeCode(); // A code typed or linked before the tab was connected.
      break;
    case 'connecting':
      status.textContent = 'connecting…';
      break;
    case 'waiting':
      status.textContent = `reconnecting in ${Math.max(1, Math.ceil((detail.wait || 0) / 1000))} s`;
      break;
    case 'refused':
      status.textContent = `refused: ${detail.reason || `the relay closed the connection (code ${detail.code})`}`;
      break;
    case 'stopped':
      status.textContent = `stopped: ${detail.reason}`;
      break;
    default:
      status.textContent = 'stopped';
  }
}

function offerCodeFromFragment() {
  const code = connectCodeFromFragment(location.hash);
  if (!code) return;
  linked = wholeCode(code);
  // Hidden until the relay says the client is verified: the person types them from the page.
  $('code').value = linked ? maskedCode(linked) : code;
  showTail(Boolean(linked));
  delete $('approve-result').dataset.code;
  $('approve-result').textContent =
    'Check that this code matches the one on the waiting page, then press Approve.';
  $('code').focus();
  codeEdited(true);
}

/** Shows or hides the field for the linked code's last characters. */
function showTail(show) {
  $('tail-box').hidden = !show;
  if (!show) $('code-tail').value = '';
}

/** The whole code the field stands for: the linked one, or the one typed. */
function fieldCode() {
  return linked ?? wholeCode($('code').value);
}

/**
 * A whole code as the relay reads it (capitals, no dashes or spaces, O as 0, I and L as 1), or
 * null. The relay answers with this form, and the relay client matches answers by it.
 */
function wholeCode(text) {
  const normal = String(text).replace(/[-\s]/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  return normal.length === CODE_CHARS && /^[0-9A-Z]+$/.test(normal) ? normal : null;
}

/** The code field changed: what was said about another code goes; a whole code is described soon (or `now`). */
function codeEdited(now) {
  clearTimeout(describeTimer);
  const code = fieldCode();
  const asker = $('code-asker');
  if (asker.dataset.code !== code) {
    asker.textContent = '';
    delete asker.dataset.code;
  }
  const result = $('approve-result');
  if (result.dataset.code && result.dataset.code !== code) {
    result.textContent = '';
    delete result.dataset.code;
  }
  if (!code) return;
  if (now) describeCode();
  else describeTimer = setTimeout(describeCode, DESCRIBE_AFTER_MS);
}

/** Says who asks for the code in the field: from what the relay said, or by asking it once. */
async function describeCode() {
  clearTimeout(describeTimer);
  const code = fieldCode();
  if (!code) return;
  if (described.has(code)) {
    showDescription(code, described.get(code));
    return;
  }
  if (!relay || relay.status !== 'connected') return; // Asked once the tab is connected.
  described.set(code, null);
  const asked = decisions;
  let said;
  try {
    said = await inTurn(() => relay.describe(code));
  } catch (err) {
    // A request lost with the connection may not have reached the relay: ask again once connected.
    if (relay.status !== 'connected') {
      described.delete(code);
      return;
    }
    said = { sentence: err.message };
  }
  described.set(code, said);
  if (asked === decisions) showDescription(code, said);
}

/** Shows what the relay said about `code` if the field still holds it. */
function showDescription(code, said) {
  if (!said || fieldCode() !== code) return;
  const asker = $('code-asker');
  const result = $('approve-result');
  const lookalike = $('code-lookalike');
  lookalike.hidden = !said.lookalike;
  lookalike.textContent = said.lookalike ? lookalikeSentence(shown(said.lookalike)) : '';
  if (linked === code) {
    // A verified client's link keeps one click; an unverified one's needs the last characters.
    if (said.verified) $('code').value = code.slice(0, 5) + '-' + code.slice(5);
    showTail(!said.verified);
  }
  if (said.sentence) {
    asker.textContent = '';
    delete asker.dataset.code;
    result.textContent = said.sentence;
    result.dataset.code = code;
    return;
  }
  const calls = said.client && said.client !== said.verified ? `, which calls itself “${shown(said.client)}”,` : '';
  const who = said.verified
    ? `${shown(said.verified)} (verified domain: it publishes this app's client metadata)${calls}`
    : said.client
      ? `“${shown(said.client)}” (name given by the app, not verified)`
      : 'An agent app that gave no name';
  const back = said.host ? `; you will be sent back to ${shown(said.host)}` : '';
  const started = Number.isFinite(said.age_ms) ? `It started ${ago(Date.now() - said.age_ms)}` : 'It started at an unknown time';
  const where = said.place ? `, from ${shown(said.place)}.` : `. ${CONSENT.PLACE_UNKNOWN}`;
  asker.textContent = `${who} asks to act in this tab${back}. ${started}${where}`;
  asker.dataset.code = code;
  if (result.dataset.code) {
    result.textContent = '';
    delete result.dataset.code;
  }
}

/** Runs `request` once the code requests before it have settled. */
function inTurn(request) {
  const turn = codeTurn.then(request);
  codeTurn = turn.catch(() => {});
  return turn;
}

/** The person pressed Approve or Deny: no description is asked or shown for this press's code. */
function decided() {
  clearTimeout(describeTimer);
  decisions += 1;
  delete $('approve-result').dataset.code;
}

/**
 * `code` is decided: the field, what was said about it and the waiting page's link go; typed
 * again, the relay is asked again (and says the code is spent).
 */
function codeDone(code) {
  described.delete(wholeCode(code) ?? code);
  linked = null;
  showTail(false);
  $('code').value = '';
  $('code-asker').textContent = '';
  delete $('code-asker').dataset.code;
  $('code-lookalike').hidden = true;
  $('code-lookalike').textContent = '';
  if (connectCodeFromFragment(location.hash)) history.replaceState(null, '', location.pathname + location.search);
}

/** Approves the code the person typed; never runs without their press. */
function approve(event) {
  event.preventDefault();
  const code = fieldCode();
  if (linked && code === linked && !described.get(code)?.verified && !tailMatches(code, $('code-tail').value)) {
    // Nothing is sent: only the person holding the waiting page knows these characters.
    $('approve-result').textContent = $('code-tail').value.trim() ? CONSENT.TAIL_WRONG : CONSENT.TAIL_ASK;
    $('code-tail').focus();
    return undefined;
  }
  return decide('approve', 'Approving…', async (code) => {
    const { client } = await relay.approve(code);
    refreshConnections();
    return `Connected to ${cut(client || 'the agent')}.`;
  });
}

/** Denies the code the person typed: the waiting page sends the agent app back refused. */
function deny() {
  return decide('deny', 'Denying…', async (code) => {
    await relay.deny(code);
    const client = described.get(code)?.client;
    return `Denied: ${client ? shown(client) : 'the agent app'} was refused.`;
  });
}

/**
 * The person's decision on the typed code (`action` is 'approve' or 'deny'): both buttons off
 * while the relay is asked, `run(code)` with the whole code, and its sentence (or the error's)
 * shown.
 */
async function decide(action, doing, run) {
  const result = $('approve-result');
  const typed = linked ?? $('code').value.trim();
  if (!typed) {
    result.textContent = 'Type the connect code shown on the waiting page.';
    return;
  }
  if (!relay) {
    result.textContent = `This page has no relay to ${action} the code with; its configuration (demo/config.js) names no valid relay address.`;
    return;
  }
  decided();
  $('approve').disabled = true;
  $('deny').disabled = true;
  result.textContent = doing;
  try {
    result.textContent = await inTurn(() => run(wholeCode(typed) ?? typed));
    codeDone(typed);
  } catch (err) {
    result.textContent = err.message;
  } finally {
    $('approve').disabled = false;
    $('deny').disabled = false;
  }
}

/** Asks the relay for this tab's connections and shows them. */
function refreshConnections() {
  return $('connections').refresh();
}

function undo() {
  try {
    app.run('history_undo', {}, PERSON);
    relay?.step();
  } catch (err) {
    $('undo').title = err.message;
  }
}

/** Copies the connector address; where the browser refuses, selects it for the person to copy. */
async function copyAddress() {
  try {
    await navigator.clipboard.writeText(connectorAddress);
    $('copy-result').textContent = 'Copied.';
  } catch {
    getSelection().selectAllChildren($('connector-address'));
    $('copy-result').textContent = 'Selected: press Ctrl+C (⌘C) to copy it.';
  }
}

function cut(text, chars = NAME_CHARS) {
  const all = [...String(text)];
  return all.length > chars ? `${all.slice(0, chars - 1).join('')}…` : all.join('');
}
