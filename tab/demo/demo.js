// The Tabrelay demo page: draws the app's data, its history and the agents' calls, and answers
// the relay's calls. The person's side is the tab end's, embedded as an app would:
// - the Agents panel (../agents-panel.js, `<tabrelay-agents>`): the relay's status and the
//   connector address with Copy, the connect code entry and approval (who asks, verified or
//   not, how long ago and from where, the lookalike warning, the last characters of a linked
//   code), the connections with Forget, the data switch, the mode and each kind, each tool;
// - the confirm card and the activity line (../presence-elements.js) beside the chart;
// - the record of what agents did (../record.js, a section of the panel), and the sign that an
//   agent drives the tab (../driven.js: the title, the favicon and a banner with Stop);
// - the chat bar (../chat-element.js, `<tabrelay-chat>`): the person's own model, called with
//   their own key from this page, its calls through the same door as every other agent's.
// The presence (../presence.js) runs every call through the person's permissions (deleting
// items is a confirm kind of this app; comparing two groups with many permutations is heavy,
// from the app's own measurement of its cost on this device) and the dataset's switch
// "Agents see names and summaries only" (../data-guard.js) guards it first. "Another dataset"
// shows a new dataset: every question waiting is withdrawn (the agent is told why), its switch
// starts as the shown one's was (unless the person set it), and the page says which.
//
// Its tools are written once, in WebMCP's shape, through the tab end's bridge (../webmcp.js):
// registered with the browser's `document.modelContext` when it has WebMCP (an agent in this
// browser finds them there) and stated to the relay (remote agents find them there); either
// agent's call goes through the same door (the data switch, then the person's permissions). A
// tool the page registers with `document.modelContext` itself is relayed too.
//
// The relay it pairs with is its configuration's (./config.js, written by whoever serves the
// page), never a query parameter: a link cannot point the page at another relay. Query
// parameter: ?seed=<number> (default: a random one kept in sessionStorage, so a reload shows
// the same data).

import { createTabrelay } from '../tabrelay.js';
import { CATALOGUE, shownText } from '../generated/bundle.js';
import { DATA_SENTENCES } from '../data-guard.js';
import { createDemoApp, seedOf, pictureSize, PERSON, PICTURE_WIDTH_DEFAULT } from './app.js';
import * as config from './config.js';

const { RELAY, LOCAL } = config;

const SEED_KEY = 'tabrelay-demo:seed';
/** The demo's confirm kinds, per tool, and why each asks. */
const CONFIRM_KINDS = { items_delete: ['deletes-items'] };
const KIND_WORDS = { 'deletes-items': 'it deletes items (a reload loses them for good)' };
const KIND_NAMES = { 'deletes-items': 'Deleting items' };
/** The tools whose arguments name items (`ids`, or one `id`): a card about one marks them on the chart. */
const NAMES_ITEMS = new Set(['items_delete', 'items_values', 'items_highlight', 'item_set_value']);
const CALLS_SHOWN = 200;
const NAME_CHARS = 80;

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

/** The shown dataset's seed. */
let seed = seedOf(seedOfPage());
let app = createDemoApp({ seed, picture });
let unsubscribeApp = app.subscribe(render);
/** The items the waiting card names, marked on the chart (not the app's highlight). */
let named = new Set();
showDataset();
// The tab end, wired in one call: the relay client, the person's presence and data switch, the
// tools registered once for both kinds of agent, the record, the driven sign and the elements.
const tabrelay = createTabrelay({
  relay: RELAY,
  local: LOCAL,
  app: CATALOGUE.resource_prefix,
  tools: CATALOGUE.tools,
  run: (name, input, client) => app.run(name, input, client.agent, client.signal),
  dataset: app.dataset.name,
  confirmKinds: CONFIRM_KINDS,
  kindWords: KIND_WORDS,
  kindNames: KIND_NAMES,
  // The items a card names, marked on the chart while it waits.
  itemsOf: (call) => itemsOf(call.tool, call.args),
  // The app's own measurement of a call's cost on this device (groups_compare's permutations).
  estimate: (call) => app.estimateMs(call.tool, call.args),
  // A step is the dataset's: Undo turn takes back only the steps of the dataset shown.
  stepOf: (result) => (result?.data?.step != null ? { app, step: result.data.step } : null),
  undoTurn: (steps) => {
    const here = steps.filter((s) => s.app === app);
    if (!here.length) {
      const other = steps[0]?.app?.dataset?.name;
      throw new Error(`This turn changed ${other ? `“${shown(other)}”` : 'another dataset'}, which is no longer shown, so it cannot be undone here.`);
    }
    app.undoSteps(here.map((s) => s.step), PERSON);
  },
  actionOf: (call) => actionOf(call.tool, call.args),
  // Where the browser has no fingerprint, face, PIN or screen lock to confirm the person (a
  // page on 127.0.0.1 never has: WebAuthn needs a host name), the demo still lets the person
  // decide, and the card says an agent driving the browser could have pressed it. An app
  // whose people all have such a device passes 'refuse' (the default).
  // `?device=required` tries the stricter choice (a query can only make it stricter).
  withoutDevice: params.get('device') === 'required' ? 'refuse' : 'allow',
  confirm: $('confirm'),
  activity: $('activity'),
  panel: $('agents'),
  // The chat bar: the person's own model with their own key, through the same door. Its
  // providers' origins are the configuration's (the tests' played providers), never a query's.
  chat: { element: $('chat'), origins: config.CHAT_ORIGINS ?? {} },
});
tabrelay.on('call', ({ agent, tool, outcome }) => logCall(agent, tool, outcome));
// While a card waits, the items it names are marked on the chart; unmarked once it goes.
tabrelay.on('items', (items) => {
  named = new Set(items);
  drawScreen();
});
// For the console and the tests: the bridge, and withdrawing one of the demo's tools.
window.tabrelayDemo = Object.freeze({ bridge: tabrelay.bridge, withdraw: (name) => tabrelay.withdraw(name) });

// On the phone the driven banner sits at the top of the screen, where the panel's fixed notice
// that the calls went to another tab sits too: the page keeps the banner's foot in
// --driven-foot, and the notice stands beneath it (index.html), both readable.
function drivenFoot() {
  const el = document.querySelector('tabrelay-driven');
  const box = el?.isConnected && !el.hidden ? el.getBoundingClientRect() : null;
  const foot = box && box.height > 0 && box.top < innerHeight / 2 ? Math.ceil(box.bottom) : 0;
  document.documentElement.style.setProperty('--driven-foot', `${foot}px`);
}
const drivenSized = new ResizeObserver(drivenFoot);
new MutationObserver(() => {
  const el = document.querySelector('tabrelay-driven');
  if (el) drivenSized.observe(el);
  drivenFoot();
}).observe(document.body, { childList: true });

let resizing = false;
window.addEventListener('resize', () => {
  drivenFoot();
  if (resizing) return;
  resizing = true;
  requestAnimationFrame(() => {
    resizing = false;
    drawScreen();
  });
});
$('undo').addEventListener('click', undo);
$('another-dataset').addEventListener('click', anotherDataset);
/** Whether the person showed another dataset (the page then says what its switch is). */
let datasetChanged = false;
tabrelay.dataSwitch.subscribe(sayDataset);

/** The dataset shown: its name in the page, the title and the plot. */
function showDataset() {
  $('dataset-name').textContent = app.dataset.name;
  document.title = `${app.dataset.name} · Tabrelay demo`;
  render();
}

/**
 * The person shows another dataset (a new seed): every question waiting is withdrawn, the
 * relay and the data switch follow the dataset, the history starts afresh.
 */
function anotherDataset() {
  seed = (seed + 1) % 1_000_000;
  unsubscribeApp();
  app = createDemoApp({ seed, picture });
  unsubscribeApp = app.subscribe(render);
  keepSeed(seed);
  // Every question waiting is withdrawn (the agent is told why); the switch (as it was for the
  // dataset shown before, unless the person set this one), the lines and the relay follow.
  tabrelay.setDataset(app.dataset.name);
  showDataset();
  datasetChanged = true;
  sayDataset();
}

/** Once another dataset was shown: what the switch is for it, written again on each change. */
function sayDataset() {
  if (!datasetChanged) return;
  const on = tabrelay.dataSwitch.isOn(app.dataset.name);
  $('dataset-said').textContent = (on ? DATA_SENTENCES.DATASET_ON : DATA_SENTENCES.DATASET_OFF).replace('{dataset}', shown(app.dataset.name));
}

/** The seed shown, kept for a reload (in the address when it came from there). */
function keepSeed(seed) {
  if (params.has('seed')) {
    params.set('seed', String(seed));
    history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
  }
  try {
    sessionStorage.setItem(SEED_KEY, String(seed));
  } catch {
    // Storage may be off; the data then changes on reload.
  }
}

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

/** What a call asked about would do, in words, every part from outside cut to 80 characters. */
function actionOf(tool, args) {
  const ids = tool === 'items_delete' && Array.isArray(args?.ids) ? [...new Set(args.ids)] : [];
  if (ids.length === 1) return `delete item ${shown(ids[0])}`;
  if (ids.length > 1) return `delete ${ids.length} items (ids ${shown(ids.map(shown).join(', '))})`;
  if (tool === 'groups_compare' && Array.isArray(args?.groups)) {
    const [a, b] = args.groups.map((g) => shown(g));
    return `compare ${shown(args.column)} between ${a} and ${b} (${Number(args.permutations ?? 10_000).toLocaleString('en')} permutations)`;
  }
  // Else the tool's title; the card lists what it is given, in words.
  return null;
}

/** The items a call of `tool` names (whole numbers of `ids`, or its `id`). */
function itemsOf(tool, args) {
  if (!NAMES_ITEMS.has(tool) || !args || typeof args !== 'object') return [];
  const ids = Array.isArray(args.ids) ? args.ids : args.id !== undefined ? [args.id] : [];
  return [...new Set(ids.filter((id) => Number.isInteger(id)))];
}

/** Text from outside as the page shows it: one line, no control or format characters, at most 80 characters. */
function shown(text) {
  return shownText(text, NAME_CHARS);
}

/** view_picture's drawing: the plot as a base64 PNG of the size asked. */
function picture({ width, height }) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  drawPlot(canvas.getContext('2d'), width, height, { legend: true });
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
  drawPlot(ctx, width, height, { named });
  const { items, groups, highlighted } = app.view();
  const marked = app.dataset.items.filter((i) => named.has(i.id)).map((i) => i.id);
  canvas.dataset.named = marked.join(' ');
  canvas.setAttribute(
    'aria-label',
    `Scatter plot of y against x: ${items} items in ${groups.length} groups, ${highlighted.count} highlighted${marked.length ? `; marked with a red dashed ring, the ${marked.length === 1 ? 'item' : 'items'} the agent's question names: ${marked.join(', ')}` : ''}.`,
  );
}

/**
 * The plot as app.view() lays it out, highlighted items as HIGHLIGHT_MARKING says; `legend`:
 * with the legend drawn in (a picture for an agent; the page has its own list below the plot,
 * and a legend drawn over the screen's plot would hide the points under it).
 */
function drawPlot(ctx, width, height, { legend = false, named = new Set() } = {}) {
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
  // The items a waiting card names: a red dashed ring around each, over everything else.
  if (named.size) {
    ctx.save();
    ctx.strokeStyle = '#b3261e';
    ctx.lineWidth = 2.2 * k;
    ctx.setLineDash([4 * k, 3 * k]);
    for (const item of app.dataset.items) {
      if (!named.has(item.id)) continue;
      ctx.beginPath();
      ctx.arc(px(item.x), py(item.y), 9 * k, 0, 2 * Math.PI);
      ctx.stroke();
    }
    ctx.restore();
  }

  // The legend, top right, so a picture alone says which colour is which group (unless the
  // picture is too small for it; view_picture's description names the colours too).
  if (!legend) return;
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

function undo() {
  try {
    app.run('history_undo', {}, PERSON);
    tabrelay.step();
  } catch (err) {
    $('undo').title = err.message;
  }
}

function cut(text, chars = NAME_CHARS) {
  const all = [...String(text)];
  return all.length > chars ? `${all.slice(0, chars - 1).join('')}…` : all.join('');
}
