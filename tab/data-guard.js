// What agents are sent of the data: the person's switch "Agents see names and summaries only",
// per dataset, and the guard every call goes through. No dependencies, no DOM.
//
//   import { createDataSwitch, guardCall } from './data-guard.js';
//   const dataSwitch = createDataSwitch({ app: 'orders' });
//   handle: (call) => guardCall({ tool, dataset: 'orders-2026', dataSwitch }, () => presence.run(call, run))
//
// Every tool says what its result carries (`data`: 'cells' or 'summaries', from the bundle's
// catalogue). With the switch on, a tool that reads single items' values (or a picture, which
// draws each item) or that nobody classified is refused with one sentence before it runs; the
// switch is read again after the call (turned on meanwhile: the result is withheld); and what
// runs is sent without pictures and without single-item statistics (a minimum, a maximum, a
// median is one item's own value; means, counts and shares stay), said in `left_out` beside
// the data. The switch is the person's alone: no tool turns it off. Not anonymisation: a
// summary of a very small group can still reveal its items' values (DATA_SENTENCES.CAVEAT).

import { createKeptStore } from './kept-store.js';

/** What a tool's result may carry of the data. */
export const DATA_CLASSES = Object.freeze(['cells', 'summaries']);
/** Statistics that are each one item's own value: left out of summaries while the switch is on. */
export const SINGLE_CELL_STATISTICS = Object.freeze(['min', 'max', 'median']);
/** Where a browser keeps an app's switches (`${DATA_SWITCH_KEY}:${app}`: dataset → true). */
export const DATA_SWITCH_KEY = 'tabrelay:data-switch';
/** The sentences the person and the agents read. */
export const DATA_SENTENCES = Object.freeze({
  SWITCH: 'Agents see names and summaries only',
  REFUSED: 'The person set this dataset to “Agents see names and summaries only”, so {tool} did not run: it reads single items’ values. Use a summary instead, or ask the person in plain words.',
  UNCLASSIFIED: 'The person set this dataset to “Agents see names and summaries only”, and nobody said what {tool} reads, so it did not run. Use a summary instead, or ask the person in plain words.',
  TURNED_ON: 'The person turned on “Agents see names and summaries only” while this call ran, so its result is not sent.',
  LEFT_OUT: 'Left out because the person set this dataset to names and summaries only: {what}.',
  NOTICE: 'Agents you connect are sent the names, counts and summaries of the dataset shown and, when they ask, single items’ values and pictures of the view; they go to the agent’s provider with the conversation. The dataset’s files never leave this browser.',
  NOTICE_ON: 'Agents are sent names, counts and summaries only: no single item’s values, no minimum, maximum or median, no pictures.',
  CAVEAT: 'This is not anonymisation: a summary of a very small group (a narrow range, a rare category) can still reveal its items’ values.',
});
const STATISTIC_WORDS = Object.freeze({ min: 'minimums', max: 'maximums', median: 'medians', picture: 'the picture' });

/** What `tool`'s result carries: 'cells', 'summaries', or null when nobody classified it. */
export function dataClassOf(tool) {
  return tool && DATA_CLASSES.includes(tool.data) ? tool.data : null;
}

/** The sentence refusing a call of `tool` before it runs while the switch is `on`, or null. */
export function refusalBefore(tool, on) {
  if (!on) return null;
  const name = `“${tool?.name ?? 'this tool'}”`;
  const data = dataClassOf(tool);
  if (data === 'summaries') return null;
  return (data === 'cells' ? DATA_SENTENCES.REFUSED : DATA_SENTENCES.UNCLASSIFIED).replace('{tool}', name);
}

/**
 * A result ({data, image?, …}) as sent while the switch is `on`: without single-item statistics
 * (any key named in SINGLE_CELL_STATISTICS, at any depth) and without pictures, with what was
 * left out said in `data.left_out`. Off: the result as it is.
 */
export function leaveOut(result, on) {
  if (!on || !result) return result;
  const left = new Set();
  const strip = (value) => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (SINGLE_CELL_STATISTICS.includes(k)) left.add(k);
      else out[k] = strip(v);
    }
    return out;
  };
  const { image, ...rest } = result;
  const data = strip(rest.data);
  if (image) left.add('picture');
  if (!left.size) return { ...rest, data };
  const named = [...SINGLE_CELL_STATISTICS, 'picture'].filter((k) => left.has(k));
  const sentence = DATA_SENTENCES.LEFT_OUT.replace('{what}', named.map((k) => STATISTIC_WORDS[k]).join(', '));
  return { ...rest, data: data && typeof data === 'object' && !Array.isArray(data) ? { ...data, left_out: sentence } : { value: data, left_out: sentence } };
}

/**
 * The switches of `app`, kept per dataset in `storage` (localStorage; off when storage is
 * off, kept for the page): `isOn(dataset)`, `set(dataset, on)` (the person's UI only: no tool
 * calls it), `noticeSeen(dataset)` / `seeNotice(dataset)`, `subscribe(fn)`, `follow(window)`.
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
 * after, statistics and pictures left out. Rejects with an Error whose message the agent reads.
 */
export async function guardCall({ tool, dataset, dataSwitch }, run) {
  const before = refusalBefore(tool, dataSwitch.isOn(dataset));
  if (before) throw new Error(before);
  const result = await run();
  const on = dataSwitch.isOn(dataset);
  if (on && dataClassOf(tool) !== 'summaries') throw new Error(DATA_SENTENCES.TURNED_ON);
  return leaveOut(result, on);
}
