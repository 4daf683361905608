// What agents are sent of the data: the person's switch "Agents see names and summaries only",
// per dataset, and the guard every call goes through. No dependencies but the presence's
// NotRun and the bundle's limit, no DOM.
//
//   import { createDataSwitch, guardCall } from './data-guard.js';
//   const dataSwitch = createDataSwitch({ app: 'orders' });
//   handle: (call) => guardCall({ tool, dataset: 'orders-2026', dataSwitch }, () => presence.run(call, run))
//
// Every tool says what its result carries (`data`: 'cells' or 'summaries', from the bundle's
// catalogue), and a summaries tool says what its answer may carry while the switch is on
// (`summaries_only`: `result`, the paths of its data that may be sent, such as
// `groups[].mean`; `errors`: 'as_said' when its error messages never carry a value of the
// data, else 'withheld'). With the switch on, a tool that reads single items' values (or a
// picture, which draws each item) or that does not say what it may send is refused with one
// sentence before it runs; the switch is read again after the call (turned on meanwhile: a
// cell read's result is withheld); and what runs is sent through its allow-list: only the
// listed paths' values (strings, numbers, true, false, null) go, everything else (any other
// key, a picture, a sound, a document, a question for the agent app) is left out, counted in
// `left_out` beside the data without naming it (a key can itself be a value); an error the
// app threw is sent only when the tool's errors are 'as_said' (the tab end's own sentences
// always are). The switch is the person's alone: no tool turns it off. Not anonymisation: a
// summary of a very small group can still reveal its items' values (DATA_SENTENCES.CAVEAT),
// and so can a summary read before and after a change.

import { createKeptStore } from './kept-store.js';
import { NotRun } from './presence.js';
import { DATA_PATH_MAX_CHARS, DATA_CLASSES, ERROR_WORDS } from './generated/bundle.js';

/**
 * What a tool's result may carry of the data (`DATA_CLASSES`), and what a summaries tool's error
 * messages may carry while the switch is on (`ERROR_WORDS`): the words of the catalogue's
 * declarations (bundle/src/catalogue.rs), as the tab's copy of the bundle carries them.
 */
export { DATA_CLASSES, ERROR_WORDS };
/** Where a browser keeps an app's switches (`${DATA_SWITCH_KEY}:${app}`: dataset → true). */
export const DATA_SWITCH_KEY = 'tabrelay:data-switch';
/** An allow-list path (bundle/src/catalogue.rs `valid_data_path`): keys, each maybe `[]`, joined by `.`. */
const DATA_PATH = /^[A-Za-z0-9_-]+(\[\])?(\.[A-Za-z0-9_-]+(\[\])?)*$/;
/** The sentences the person and the agents read. */
export const DATA_SENTENCES = Object.freeze({
  SWITCH: 'Agents see names and summaries only',
  REFUSED: 'The person set this dataset to “Agents see names and summaries only”, so {tool} did not run: it reads single items’ values. Use a summary instead, or ask the person in plain words.',
  UNCLASSIFIED: 'The person set this dataset to “Agents see names and summaries only”, and nobody said what {tool} may send then, so it did not run. Use a summary instead, or ask the person in plain words.',
  TURNED_ON: 'The person turned on “Agents see names and summaries only” while this call ran, so its result is not sent.',
  LEFT_OUT: 'Left out because the person set this dataset to names and summaries only: {what}.',
  ERROR_WITHHELD: 'The app refused or failed {tool}; its own words are left out because the person set this dataset to names and summaries only (they could carry an item’s value).',
  NOTICE: 'Agents you connect are sent the names, counts and summaries of the dataset shown and, when they ask, single items’ values and pictures of the view; they go to the agent’s provider with the conversation. The dataset’s files never leave this browser.',
  NOTICE_ON: 'Agents are sent names, counts and summaries only, as each tool of the app lists them: no single item’s values, no minimum, maximum or median, no pictures.',
  CAVEAT: 'This is not anonymisation: a summary of a very small group (a narrow range, a rare category) can still reveal its items’ values.',
  /** Said when the app shows another dataset (`{dataset}`: its name), with the switch on, or off. */
  DATASET_ON: 'Now “{dataset}”: the switch is on, agents see its names and summaries only.',
  DATASET_OFF: 'Now “{dataset}”: the switch is off, agents are sent its single items’ values and pictures when they ask.',
});
/** What a result carries besides its data, in words: never sent while the switch is on. */
const PARTS = Object.freeze({ image: 'the picture', audio: 'the sound', resource: 'the document', inputRequired: 'a question for the agent app' });

/** What `tool`'s result carries: 'cells', 'summaries', or null when nobody classified it. */
export function dataClassOf(tool) {
  return tool && DATA_CLASSES.includes(tool.data) ? tool.data : null;
}

/**
 * What a summaries `tool` may send while the switch is on ({result: paths, errors}), or null
 * when it is no summaries tool or does not say so in the catalogue's shape.
 */
export function allowListOf(tool) {
  if (dataClassOf(tool) !== 'summaries') return null;
  const only = tool.summaries_only;
  if (!only || typeof only !== 'object' || !Array.isArray(only.result) || !ERROR_WORDS.includes(only.errors)) return null;
  const valid = (p) => typeof p === 'string' && p.length <= DATA_PATH_MAX_CHARS && DATA_PATH.test(p);
  return only.result.every(valid) ? { result: [...only.result], errors: only.errors } : null;
}

/** The sentence refusing a call of `tool` before it runs while the switch is `on`, or null. */
export function refusalBefore(tool, on) {
  if (!on) return null;
  const name = `“${tool?.name ?? 'this tool'}”`;
  if (allowListOf(tool)) return null;
  return (dataClassOf(tool) === 'cells' ? DATA_SENTENCES.REFUSED : DATA_SENTENCES.UNCLASSIFIED).replace('{tool}', name);
}

/**
 * A result ({data, image?, …}) of `tool` as sent while the switch is `on`: its data through
 * the tool's allow-list, nothing else, with how much was left out said in `data.left_out`.
 * Off: the result as it is. A tool without an allow-list sends nothing of its data.
 */
export function leaveOut(result, tool, on) {
  if (!on || !result) return result;
  const tree = pathTree(allowListOf(tool)?.result ?? []);
  const dropped = { count: 0 };
  const data = result.data === null || result.data === undefined ? DROPPED : sift(result.data, tree, dropped);
  const parts = [];
  for (const [key, value] of Object.entries(result)) {
    if (key === 'data' || value === undefined || value === null) continue;
    if (Object.hasOwn(PARTS, key)) parts.push(PARTS[key]);
    else dropped.count += 1;
  }
  if (dropped.count) {
    parts.unshift(`${dropped.count} ${dropped.count === 1 ? 'value' : 'values'} beyond the names, counts and summaries “${tool?.name ?? 'this tool'}” may send`);
  }
  const kept = data === DROPPED ? undefined : data;
  if (!parts.length) return { data: kept };
  const sentence = DATA_SENTENCES.LEFT_OUT.replace('{what}', parts.join(', '));
  return { data: kept && typeof kept === 'object' && !Array.isArray(kept) ? withKey(kept, 'left_out', sentence) : { left_out: sentence } };
}

/**
 * An error a call of `tool` threw, as sent while the switch is `on`: the tab end's own
 * sentences (NotRun) as they are, the app's only when the tool's errors are 'as_said'.
 */
export function errorSent(err, tool, on) {
  if (!on || err instanceof NotRun || allowListOf(tool)?.errors === 'as_said') return err;
  return new Error(DATA_SENTENCES.ERROR_WITHHELD.replace('{tool}', `“${tool?.name ?? 'this tool'}”`));
}

/** What sift returns for a value that is not sent. */
const DROPPED = Symbol('dropped');

/** The allow-list as a tree: a node is {leaf, fields: Map key → node, each: node}. */
function pathTree(paths) {
  const node = () => ({ leaf: false, fields: new Map(), each: null });
  const root = node();
  for (const path of paths) {
    let at = root;
    const segments = path.split('.');
    segments.forEach((segment, i) => {
      const list = segment.endsWith('[]');
      const key = list ? segment.slice(0, -2) : segment;
      if (!at.fields.has(key)) at.fields.set(key, node());
      at = at.fields.get(key);
      if (list) at = at.each ??= node();
      if (i === segments.length - 1) at.leaf = true;
    });
  }
  return root;
}

/** `value` with only what `node` allows (DROPPED when nothing of it is), counting what went. */
function sift(value, node, dropped) {
  if (value === undefined) return DROPPED;
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
    if (node.leaf) return value;
    dropped.count += 1;
    return DROPPED;
  }
  if (Array.isArray(value)) {
    if (!node.each) {
      dropped.count += 1;
      return DROPPED;
    }
    return value.map((v) => sift(v, node.each, dropped)).filter((v) => v !== DROPPED);
  }
  if (typeof value !== 'object' || !node.fields.size) {
    dropped.count += 1;
    return DROPPED;
  }
  let out = {};
  for (const [key, v] of Object.entries(value)) {
    const child = node.fields.get(key);
    const kept = child ? sift(v, child, dropped) : DROPPED;
    if (!child && v !== undefined) dropped.count += 1;
    if (kept !== DROPPED) out = withKey(out, key, kept);
  }
  return out;
}

/** `object` with `key` set to `value` as an own property (`__proto__` too). */
function withKey(object, key, value) {
  const out = { ...object };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The switches of `app`, kept per dataset in `storage` (localStorage; off when storage is
 * off, kept for the page): `isOn(dataset)`, `set(dataset, on)` (the person's UI only: no tool
 * calls it), `carry(from, to, on)` (another dataset shown), `noticeSeen(dataset)` /
 * `seeNotice(dataset)`, `subscribe(fn)`, `follow(window)`.
 */
export function createDataSwitch({ app, storage = globalThis.localStorage } = {}) {
  if (!app) throw new Error('createDataSwitch needs the app’s name: switches are kept per app.');
  const kept = createKeptStore({ key: `${DATA_SWITCH_KEY}:${app}`, storage, read: readSwitches });
  const entry = (dataset) => {
    const all = kept.get();
    const one = Object.hasOwn(all, String(dataset)) ? all[String(dataset)] : null;
    return one && typeof one === 'object' ? one : {};
  };
  const update = (dataset, change) => kept.set({ ...kept.get(), [String(dataset)]: { ...entry(dataset), ...change } });
  return {
    key: kept.key,
    isOn: (dataset) => entry(dataset).on === true,
    set: (dataset, on) => update(dataset, { on: Boolean(on) }),
    /**
     * Dataset `to` is shown after `from`: one whose switch was never set starts as the app says
     * (`on`, a boolean), else as `from`'s, so showing another dataset never turns the switch off
     * unasked (its notice then says what agents are sent, until Got it). Returns whether `to`'s
     * switch is on.
     */
    carry(from, to, on) {
      const set = entry(to).on;
      if (typeof set === 'boolean') return set;
      const start = typeof on === 'boolean' ? on : from != null && entry(from).on === true;
      if (start) update(to, { on: true });
      return start;
    },
    noticeSeen: (dataset) => entry(dataset).seen === true,
    seeNotice: (dataset) => update(dataset, { seen: true }),
    subscribe: (fn) => kept.subscribe(() => fn()),
    follow: kept.follow,
  };
}

/** The switches as kept (dataset → {on, seen}): anything else is none. */
function readSwitches(text) {
  let kept = null;
  try {
    kept = typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    kept = null;
  }
  return kept && typeof kept === 'object' && !Array.isArray(kept) ? kept : {};
}

/**
 * Runs a call of `tool` on `dataset` through the switch: refused before it runs, read again
 * after, its result through the tool's allow-list and its errors as the tool says. Rejects with
 * an Error whose message the agent reads.
 */
export async function guardCall({ tool, dataset, dataSwitch }, run) {
  const before = refusalBefore(tool, dataSwitch.isOn(dataset));
  if (before) throw new Error(before);
  let result;
  try {
    result = await run();
  } catch (err) {
    throw errorSent(err, tool, dataSwitch.isOn(dataset));
  }
  const on = dataSwitch.isOn(dataset);
  if (on && !allowListOf(tool)) throw new Error(DATA_SENTENCES.TURNED_ON);
  return leaveOut(result, tool, on);
}
