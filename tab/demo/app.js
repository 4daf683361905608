// The Tabrelay demo app without its page: a dataset made from a seed, the highlight, the
// history, and the eleven tools of bundle/data/catalogue.json. A pure ES module (no DOM, no
// dependencies) that runs in Node and in browsers, so the tests drive the code the page runs.
//
//   import { createDemoApp } from './app.js';
//   const app = createDemoApp({ seed: 4821, picture });
//   app.run('groups_summary', { column: 'score' }, 'Claude'); // → { data }, or throws
//
// `run` returns {data} (and {image} for view_picture) or throws an Error whose message is one
// sentence to act on. Names that came from outside are quoted as JSON string literals cut to
// 80 characters, with `<` and line or direction marks escaped.
//
// History: every change (items_highlight, item_set_value, group_rename, items_delete,
// history_undo) appends a step {step, who, tool, summary, brief, undone} to `app.history`:
// `summary` says what it did, `brief` the same without any item's value (what an agent is sent
// while the person has set the dataset to names and summaries only: the catalogue's
// `summaries_only` lists `brief`, never `summary` or `old`, for a step that can carry a value).
// history_undo undoes the most recent step that is neither undone nor an undo, marks that step
// `undone: true`, and appends its own step with `undoes: <step number>`. An undo cannot itself
// be undone (there is no redo): undoing again walks further back.

import { CATALOGUE } from '../generated/bundle.js';

export const PERSON = 'the person';
export const PICTURE_WIDTH_DEFAULT = 640;
/** A picture's height over its width. */
export const PICTURE_ASPECT = 0.75;
export const HISTORY_LAST_DEFAULT = 50;
/** The most steps kept (undo steps too); older ones are dropped and can no longer be undone. */
export const HISTORY_LIMIT = 1000;
/** The most characters of any outside text an error sentence or a summary repeats. */
export const QUOTE_CHARS = 80;
/** The largest size of a value item_set_value accepts, so sums and plots stay finite. */
export const VALUE_LIMIT = 1e9;
/** groups_compare's permutations when none are asked. */
export const PERMUTATIONS_DEFAULT = 10_000;
/** How long the app first measures groups_compare on this device before estimating a call. */
export const MEASURE_MS = 40;
/** The measurement's rounds (at least this many) and each round's permutations. */
const MEASURE_ROUNDS = 4;
const MEASURE_PERMUTATIONS = 5_000;
/** groups_compare works in slices this long, so the page answers between them (pings, Stop). */
export const SLICE_MS = 20;
/** How view_picture marks the highlighted items; demo.js draws them so. */
export const HIGHLIGHT_MARKING = 'drawn larger with a black ring, the other items faded';

/** The numeric columns every item has. */
export const COLUMNS = Object.freeze([
  Object.freeze({ name: 'x', type: 'number' }),
  Object.freeze({ name: 'y', type: 'number' }),
  Object.freeze({ name: 'score', type: 'number' }),
  Object.freeze({ name: 'size', type: 'integer' }),
]);

/** Group colours, in group order (Okabe–Ito: told apart with most kinds of colour blindness). */
export const GROUP_COLOURS = Object.freeze([
  Object.freeze({ name: 'blue', hex: '#0072B2' }),
  Object.freeze({ name: 'orange', hex: '#E69F00' }),
  Object.freeze({ name: 'green', hex: '#009E73' }),
  Object.freeze({ name: 'pink', hex: '#CC79A7' }),
  Object.freeze({ name: 'sky blue', hex: '#56B4E9' }),
  Object.freeze({ name: 'red', hex: '#D55E00' }),
]);

const DATASET_KINDS = ['Survey', 'Field study', 'Trial', 'Census'];
const GROUP_NAMES = ['Alder', 'Birch', 'Cedar', 'Elm', 'Hazel', 'Larch', 'Maple', 'Oak', 'Rowan', 'Willow'];

/** The input schemas of the catalogue's tools, from the tab's copy of the bundle. */
export const TOOL_INPUTS = Object.freeze(Object.fromEntries(CATALOGUE.tools.map((t) => [t.name, t.input])));

export function createDemoApp({ seed, picture } = {}) {
  if (picture !== undefined && picture !== null && typeof picture !== 'function') {
    throw new Error('createDemoApp takes picture as a function({ width, height, app }).');
  }
  return new DemoApp(generateDataset(seedOf(seed)), picture || null);
}

/** A seed as a 32-bit number: numbers and digit strings as themselves, other text hashed. */
export function seedOf(seed) {
  if (typeof seed === 'number' && Number.isFinite(seed)) return Math.trunc(seed) >>> 0;
  if (typeof seed === 'string' && seed.length > 0) {
    return /^\d{1,15}$/.test(seed) ? Number(seed) >>> 0 : fnv1a(seed);
  }
  throw new Error('createDemoApp needs a seed: a number or a string.');
}

/** A name from outside, safe to put in a sentence: a JSON string literal of at most 80 characters. */
export function quote(text) {
  return JSON.stringify(cut(String(text))).replace(
    /[<\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The width and height of a picture `width` pixels wide. */
export function pictureSize(width = PICTURE_WIDTH_DEFAULT) {
  return { width, height: Math.round(width * PICTURE_ASPECT) };
}

class DemoApp {
  #picture;
  #byId = new Map();
  /** Step number → the function that undoes it. */
  #reverts = new Map();
  /** Id of a deleted item → the step that deleted it. */
  #deletedIn = new Map();
  #allIds;
  #subscribers = new Set();
  #nextStep = 1;
  /** groups_compare's measured cost on this device: milliseconds per item and permutation. */
  #msPerItemPermutation = null;

  constructor(dataset, picture) {
    /** Read it; change it only through `run`. */
    this.dataset = dataset;
    this.history = [];
    this.highlighted = new Set();
    this.#picture = picture;
    this.#allIds = { min: dataset.items[0].id, max: dataset.items[dataset.items.length - 1].id };
    this.#reindex();
  }

  /** Runs one tool for `who` (the person or an agent's name): {data, image?}, or throws a sentence. */
  run(tool, args, who, signal) {
    if (typeof tool !== 'string' || !Object.hasOwn(TOOL_INPUTS, tool)) {
      throw new Error(`There is no tool ${quote(tool)} in this tab; its tools are ${Object.keys(TOOL_INPUTS).join(', ')}.`);
    }
    const checked = checkArgs(tool, TOOL_INPUTS[tool], args);
    return this.#tools[tool](checked, whoOf(who), signal);
  }

  /**
   * How long a call would take on this device, in milliseconds, from the app's own
   * measurements (groups_compare: its cost per item and permutation, measured the first time
   * for MEASURE_MS and again by every run at least that long); null for a tool that takes no time to speak of, or
   * arguments that would be refused.
   */
  estimateMs(tool, args) {
    if (tool !== 'groups_compare') return null;
    let a;
    let b;
    let permutations;
    try {
      ({ a, b, permutations } = this.#compareInputs(checkArgs(tool, TOOL_INPUTS[tool], args)));
    } catch {
      return null;
    }
    const n = a.length + b.length;
    if (this.#msPerItemPermutation === null) {
      // The fastest of a few rounds: the first run before the engine has compiled the loop.
      const random = mulberry32(n);
      const pooled = [...a, ...b];
      const start = performance.now();
      let best = Infinity;
      for (let round = 0; round < MEASURE_ROUNDS || performance.now() - start < MEASURE_MS; round += 1) {
        const t = performance.now();
        permute(pooled, a.length, MEASURE_PERMUTATIONS, random, 0);
        best = Math.min(best, (performance.now() - t) / MEASURE_PERMUTATIONS);
        if (performance.now() - start > 10 * MEASURE_MS) break;
      }
      this.#msPerItemPermutation = best / Math.max(1, n);
    }
    return this.#msPerItemPermutation * n * permutations;
  }

  /** Calls `fn(step, app)` after each change; returns a function that stops it. */
  subscribe(fn) {
    this.#subscribers.add(fn);
    return () => this.#subscribers.delete(fn);
  }

  /** The step history_undo would undo now, or null. */
  undoable() {
    const step = this.#undoTarget();
    return step ? publicStep(step) : null;
  }

  /**
   * Undo turn: undoes the given steps (numbers, newest first) that can still be undone, as one
   * step of `who` that lists them (`undoes`). Throws a sentence when none can.
   */
  undoSteps(numbers, who) {
    const targets = numbers.map((n) => this.history.find((s) => s.step === n)).filter((s) => s && !s.undone && this.#reverts.has(s.step));
    if (!targets.length) throw new Error('Nothing of that turn can be undone any more.');
    for (const target of targets) {
      this.#reverts.get(target.step)();
      this.#reverts.delete(target.step);
      target.undone = true;
    }
    const list = targets.map((t) => t.step).sort((a, b) => a - b);
    const text = `Undid an agent's turn: ${list.length === 1 ? 'step' : 'steps'} ${listed(list)}`;
    return publicStep(this.#record(whoOf(who), 'undo_turn', text, null, { undoes: list }));
  }

  /** What the plot shows: axes with their ranges and ticks, groups with colours, counts. */
  view() {
    const items = this.dataset.items;
    return {
      dataset: this.dataset.name,
      plot: 'scatter plot of y against x, one dot per item, coloured by group',
      x: { column: 'x', ...axis(items.map((i) => i.x)) },
      y: { column: 'y', ...axis(items.map((i) => i.y)) },
      groups: this.dataset.groups.map((g) => ({
        name: g.name,
        colour: g.colour,
        hex: g.hex,
        count: items.filter((i) => i.group === g.id).length,
      })),
      items: items.length,
      highlighted: { count: this.highlighted.size, marking: HIGHLIGHT_MARKING },
    };
  }

  #tools = {
    dataset_describe: () => {
      const { name, items, groups } = this.dataset;
      return {
        data: {
          name,
          items: items.length,
          ids: items.length ? { min: items[0].id, max: items[items.length - 1].id } : null,
          columns: COLUMNS.map((c) => ({ name: c.name, type: c.type })),
          groups: groups.map((g) => ({ name: g.name, count: items.filter((i) => i.group === g.id).length })),
          highlighted: this.highlighted.size,
        },
      };
    },

    groups_summary: ({ column, groups }) => {
      const col = this.#column(column);
      const chosen = groups ? unique(groups).map((g) => this.#group(g)) : this.dataset.groups;
      return {
        data: {
          column: col.name,
          groups: chosen.map((g) => ({
            group: g.name,
            ...summary(this.dataset.items.filter((i) => i.group === g.id).map((i) => i[col.name])),
          })),
        },
      };
    },

    // Its arguments are refused at once; the comparison itself takes as long as it takes.
    groups_compare: (args, _who, signal) => this.#compare(this.#compareInputs(args), signal),

    items_values: ({ ids: wanted, columns }) => {
      const cols = columns ? unique(columns).map((c) => this.#column(c)) : COLUMNS;
      const items = this.#items(unique(wanted));
      return {
        data: {
          items: items.map((item) => {
            const out = { id: item.id, group: this.#groupOf(item).name };
            for (const c of cols) out[c.name] = item[c.name];
            return out;
          }),
        },
      };
    },

    view_picture: ({ width }) => {
      if (!this.#picture) throw new Error('Pictures are not available here.');
      const size = pictureSize(width);
      const data = { ...this.view(), width: size.width, height: size.height };
      const finish = (png) => ({ data, image: { data: base64Of(png), mimeType: 'image/png', ...size } });
      let drawn;
      try {
        drawn = this.#picture({ ...size, app: this });
      } catch {
        throw new Error('The picture could not be drawn in this tab; try again or use groups_summary.');
      }
      if (drawn && typeof drawn.then === 'function') {
        return Promise.resolve(drawn).then(finish, () => {
          throw new Error('The picture could not be drawn in this tab; try again or use groups_summary.');
        });
      }
      return finish(drawn);
    },

    items_highlight: ({ ids: wanted = [], groups = [] }, who) => {
      const items = this.#items(unique(wanted));
      const chosen = unique(groups).map((g) => this.#group(g));
      const next = new Set(items.map((i) => i.id));
      for (const g of chosen) for (const i of this.dataset.items) if (i.group === g.id) next.add(i.id);
      const before = [...this.highlighted];
      this.#setHighlight(next);
      const named = chosen.length ? ` (${chosen.length === 1 ? 'group' : 'groups'} ${chosen.map((g) => quote(g.name)).join(', ')})` : '';
      const text = next.size ? `Highlighted ${count(next.size, 'item')}${named}` : 'Cleared the highlight';
      const step = this.#record(who, 'items_highlight', text, () => this.#setHighlight(new Set(before)));
      return { data: { step: step.step, summary: text, brief: step.brief, highlighted: next.size } };
    },

    item_set_value: ({ id, column, value }, who) => {
      const [item] = this.#items([id]);
      const col = this.#column(column);
      if (col.type === 'integer' && !Number.isInteger(value)) {
        throw new Error(`Column "${col.name}" holds whole numbers; give a whole number such as ${Math.round(value)}.`);
      }
      if (Math.abs(value) > VALUE_LIMIT) {
        throw new Error(`Values must lie between -${VALUE_LIMIT} and ${VALUE_LIMIT}.`);
      }
      const old = item[col.name];
      item[col.name] = value + 0; // turns -0 into 0
      const text = `Set ${col.name} of item ${id} from ${old} to ${item[col.name]}`;
      const step = this.#record(
        who,
        'item_set_value',
        text,
        () => {
          item[col.name] = old;
        },
        { brief: `Set ${col.name} of item ${id}` },
      );
      return { data: { step: step.step, summary: text, brief: step.brief, id, column: col.name, old, value: item[col.name] } };
    },

    group_rename: ({ group, name }, who) => {
      const g = this.#group(group);
      const fresh = name.trim();
      if (!fresh) throw new Error('The new name must contain more than spaces.');
      if (/[\u0000-\u001f\u007f-\u009f]/.test(fresh)) {
        throw new Error('The new name must be one line without control characters.');
      }
      if (fresh === g.name) throw new Error(`The group is already called ${quote(fresh)}.`);
      if (this.dataset.groups.some((other) => other.name === fresh)) {
        throw new Error(`There is already a group called ${quote(fresh)}; choose another name.`);
      }
      const old = g.name;
      g.name = fresh;
      const text = `Renamed group ${quote(old)} to ${quote(fresh)}`;
      const step = this.#record(who, 'group_rename', text, () => {
        g.name = old;
      });
      return { data: { step: step.step, summary: text, brief: step.brief, old, name: fresh } };
    },

    items_delete: ({ ids: wanted }, who) => {
      const gone = this.#items(unique(wanted));
      const goneIds = new Set(gone.map((i) => i.id));
      const wasHighlighted = gone.filter((i) => this.highlighted.has(i.id)).map((i) => i.id);
      this.dataset.items = this.dataset.items.filter((i) => !goneIds.has(i.id));
      for (const id of goneIds) this.highlighted.delete(id);
      this.#reindex();
      const text = gone.length === 1 ? `Deleted item ${gone[0].id}` : `Deleted ${gone.length} items (${listed(gone.map((i) => i.id))})`;
      const step = this.#record(who, 'items_delete', text, () => {
        this.dataset.items = [...this.dataset.items, ...gone].sort((a, b) => a.id - b.id);
        for (const id of wasHighlighted) this.highlighted.add(id);
        for (const id of goneIds) this.#deletedIn.delete(id);
        this.#reindex();
      });
      for (const id of goneIds) this.#deletedIn.set(id, step.step);
      return { data: { step: step.step, summary: text, brief: step.brief, deleted: gone.length, items: this.dataset.items.length } };
    },

    history_list: ({ last = HISTORY_LAST_DEFAULT }) => ({
      data: { steps: this.history.slice(-last).map(publicStep), total: this.history.length },
    }),

    history_undo: (_args, who) => {
      const target = this.#undoTarget();
      if (!target) throw new Error('There is nothing to undo.');
      this.#reverts.get(target.step)();
      this.#reverts.delete(target.step);
      target.undone = true;
      const lower = (said) => said.charAt(0).toLowerCase() + said.slice(1);
      const text = `Undid step ${target.step}: ${lower(target.summary)}`;
      const step = this.#record(who, 'history_undo', text, null, { undoes: target.step, brief: `Undid step ${target.step}: ${lower(target.brief)}` });
      return { data: { step: step.step, summary: text, brief: step.brief, undid: publicStep(target) } };
    },
  };

  /** A step; `extra.brief`: its summary without any value, when the summary has one. */
  #record(who, tool, summary, revert, extra = {}) {
    const step = { step: this.#nextStep++, who, tool, summary, brief: summary, undone: false, ...extra };
    this.history.push(step);
    if (revert) this.#reverts.set(step.step, revert);
    while (this.history.length > HISTORY_LIMIT) this.#reverts.delete(this.history.shift().step);
    for (const fn of this.#subscribers) {
      try {
        fn(publicStep(step), this);
      } catch (err) {
        // The change is made; a failing view must not turn it into an error for the caller.
        console.error(err);
      }
    }
    return step;
  }

  #undoTarget() {
    return this.history.findLast((s) => !s.undone && this.#reverts.has(s.step)) || null;
  }

  #setHighlight(ids) {
    this.highlighted.clear();
    for (const id of ids) this.highlighted.add(id);
  }

  #reindex() {
    this.#byId = new Map(this.dataset.items.map((i) => [i.id, i]));
  }

  #groupOf(item) {
    return this.dataset.groups[item.group];
  }

  /**
   * groups_compare: the permutation test, in slices, the page answering between them; it
   * stops between slices once `signal` aborts (the person pressed Stop, the agent cancelled).
   */
  async #compare({ col, first, second, a, b, permutations }, signal) {
    const pooled = [...a, ...b];
    const observed = Math.abs(mean(a) - mean(b));
    const random = mulberry32(permutations ^ pooled.length);
    const start = performance.now();
    let done = 0;
    let extreme = 0;
    /** The time spent comparing, without the page's turns between slices. */
    let busy = 0;
    while (done < permutations) {
      // A slice, then the page's turn: a long comparison never freezes the tab.
      const sliceStart = performance.now();
      while (done < permutations && performance.now() - sliceStart < SLICE_MS) {
        const slice = permute(pooled, a.length, Math.min(1000, permutations - done), random, observed);
        done += slice.done;
        extreme += slice.extreme;
      }
      busy += performance.now() - sliceStart;
      if (done < permutations) await new Promise((resolve) => setTimeout(resolve, 0));
      if (signal?.aborted) throw signal.reason;
    }
    const ms = performance.now() - start;
    // A run long enough to time well measures the cost again.
    if (busy >= MEASURE_MS) this.#msPerItemPermutation = busy / (permutations * Math.max(1, pooled.length));
    return {
      data: {
        column: col.name,
        groups: [
          { group: first.name, count: a.length, mean: round(mean(a), 4) },
          { group: second.name, count: b.length, mean: round(mean(b), 4) },
        ],
        difference: round(mean(a) - mean(b), 4),
        permutations,
        p_value: round((extreme + 1) / (permutations + 1), 6),
        seconds: round(ms / 1000, 1),
      },
    };
  }

  /** groups_compare's checked arguments: the column, the two groups and their values. */
  #compareInputs({ column, groups, permutations = PERMUTATIONS_DEFAULT }) {
    const col = this.#column(column);
    const [first, second] = groups.map((g) => this.#group(g));
    if (first === second) throw new Error(`groups_compare needs two different groups, not ${quote(first.name)} twice.`);
    const values = (g) => this.dataset.items.filter((i) => i.group === g.id).map((i) => i[col.name]);
    const [a, b] = [values(first), values(second)];
    const empty = [first, second].find((g, i) => ![a, b][i].length);
    if (empty) throw new Error(`Group ${quote(empty.name)} has no items left to compare; history_undo can bring deleted items back.`);
    return { col, first, second, a, b, permutations };
  }

  #column(name) {
    const col = COLUMNS.find((c) => c.name === name);
    if (!col) throw new Error(`There is no column ${quote(name)}; the columns are x, y, score and size.`);
    return col;
  }

  #group(name) {
    const g = this.dataset.groups.find((x) => x.name === name);
    if (!g) {
      throw new Error(`There is no group ${quote(name)}; the groups are ${this.dataset.groups.map((x) => quote(x.name)).join(', ')}.`);
    }
    return g;
  }

  /** The items with these ids, in the order given, or a sentence naming the missing ones. */
  #items(wanted) {
    const missing = wanted.filter((id) => !this.#byId.has(id));
    if (missing.length) {
      const many = missing.length > 1;
      if (missing.every((id) => this.#deletedIn.has(id))) {
        const steps = unique(missing.map((id) => this.#deletedIn.get(id)));
        throw new Error(
          `${many ? 'Items' : 'Item'} ${listed(missing)} ${many ? 'were' : 'was'} deleted (${steps.length > 1 ? 'steps' : 'step'} ${listed(steps)}); history_undo can bring ${many ? 'them' : 'it'} back.`,
        );
      }
      const { min, max } = this.#allIds;
      throw new Error(`There ${many ? 'are no items' : 'is no item'} ${listed(missing)}; item ids run from ${min} to ${max}.`);
    }
    return wanted.map((id) => this.#byId.get(id));
  }
}

function publicStep({ step, who, tool, summary, brief, undone, undoes }) {
  return undoes === undefined ? { step, who, tool, summary, brief, undone } : { step, who, tool, summary, brief, undone, undoes };
}

// Arguments: the subset of JSON Schema the catalogue uses, with sentences to act on.

function checkArgs(tool, schema, args) {
  const given = args === undefined || args === null ? {} : args;
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw new Error(`The arguments of ${tool} must be a JSON object, not ${describe(given)}.`);
  }
  const known = Object.keys(schema.properties);
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(schema.properties, key)) {
      throw new Error(
        known.length
          ? `${tool} has no argument ${quote(key)}; it takes ${known.join(' and ')}.`
          : `${tool} takes no arguments, but was given ${quote(key)}.`,
      );
    }
  }
  for (const key of schema.required || []) {
    if (given[key] === undefined) throw new Error(`${tool} needs the argument "${key}".`);
  }
  for (const key of known) {
    if (given[key] !== undefined) checkValue(tool, key, schema.properties[key], given[key]);
  }
  return given;
}

function checkValue(tool, path, schema, value) {
  const fail = (what) => {
    throw new Error(`In ${tool}, "${path}" ${what}.`);
  };
  switch (schema.type) {
    case 'integer':
    case 'number':
      if (schema.type === 'integer' ? !Number.isInteger(value) : typeof value !== 'number' || !Number.isFinite(value)) {
        fail(`must be ${schema.type === 'integer' ? 'a whole number' : 'a number'}, not ${describe(value)}`);
      }
      if (schema.minimum !== undefined && value < schema.minimum) fail(`must be at least ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) fail(`must be at most ${schema.maximum}`);
      break;
    case 'string': {
      if (typeof value !== 'string') fail(`must be a string, not ${describe(value)}`);
      const length = [...value].length;
      if (schema.minLength !== undefined && length < schema.minLength) {
        fail(schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters long`);
      }
      if (schema.maxLength !== undefined && length > schema.maxLength) {
        fail(`must be at most ${schema.maxLength} characters long`);
      }
      break;
    }
    case 'array':
      if (!Array.isArray(value)) fail(`must be a list, not ${describe(value)}`);
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        fail(`needs at least ${count(schema.minItems, 'item')}`);
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        fail(`may hold at most ${schema.maxItems} items, not ${value.length}; split the call into smaller ones`);
      }
      value.forEach((v, i) => checkValue(tool, `${path}[${i}]`, schema.items, v));
      break;
    default:
      throw new Error(`In ${tool}, "${path}" has a type this tab does not know.`);
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return String(value);
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return 'nothing';
  }
}

// Small helpers.

function whoOf(who) {
  const text = typeof who === 'string' ? who.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim() : '';
  return text ? cut(text) : 'someone';
}

function cut(text) {
  const chars = [...text];
  return chars.length > QUOTE_CHARS ? `${chars.slice(0, QUOTE_CHARS - 1).join('')}…` : text;
}

function unique(values) {
  return [...new Set(values)];
}

function count(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Up to ten numbers, "1, 2 and 3" or "1, 2, … and 14 more". */
function listed(numbers) {
  if (numbers.length > 10) return `${numbers.slice(0, 10).join(', ')} and ${numbers.length - 10} more`;
  if (numbers.length === 1) return String(numbers[0]);
  return `${numbers.slice(0, -1).join(', ')} and ${numbers[numbers.length - 1]}`;
}

function round(value, places) {
  const f = 10 ** places;
  return Math.round(value * f) / f + 0;
}

function mean(values) {
  return values.reduce((x, y) => x + y, 0) / values.length;
}

/**
 * `count` random relabellings of `pooled` (its first `split` items one group, the rest the
 * other), shuffled in place: how many were done and how many had means at least `observed` apart.
 */
function permute(pooled, split, count, random, observed) {
  const n = pooled.length;
  const total = pooled.reduce((x, y) => x + y, 0);
  let extreme = 0;
  for (let k = 0; k < count; k += 1) {
    let sum = 0;
    for (let i = 0; i < split; i += 1) {
      const j = i + Math.floor(random() * (n - i));
      const v = pooled[j];
      pooled[j] = pooled[i];
      pooled[i] = v;
      sum += v;
    }
    const diff = Math.abs(sum / split - (total - sum) / (n - split));
    if (diff >= observed - 1e-12) extreme += 1;
  }
  return { done: count, extreme };
}

/**
 * Count, mean, sample standard deviation (n − 1), minimum, median and maximum; null where there
 * are too few values.
 */
function summary(values) {
  const n = values.length;
  if (n === 0) return { count: 0, mean: null, sd: null, min: null, median: null, max: null };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = n < 2 ? null : Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
  const sorted = [...values].sort((a, b) => a - b);
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { count: n, mean: round(mean, 4), sd: sd === null ? null : round(sd, 4), min: sorted[0], median: round(median, 4), max: sorted[n - 1] };
}

/** An axis over `values`: a range ending on round numbers, and its ticks. */
function axis(values) {
  let lo = values.length ? Math.min(...values) : 0;
  let hi = values.length ? Math.max(...values) : 1;
  if (hi - lo < 1e-9) {
    lo -= 1;
    hi += 1;
  }
  const rough = (hi - lo) / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough);
  const places = Math.max(0, -Math.floor(Math.log10(step)));
  const min = round(Math.floor(lo / step) * step, places);
  const max = round(Math.ceil(hi / step) * step, places);
  const ticks = [];
  for (let t = min; t <= max + step / 2; t += step) ticks.push(round(t, places));
  return { min, max, ticks };
}

function base64Of(png) {
  if (typeof png !== 'string' || !png) {
    throw new Error('The picture could not be drawn in this tab; try again or use groups_summary.');
  }
  return png.replace(/^data:image\/png;base64,/, '');
}

// The dataset, made from the seed alone.

function generateDataset(seed) {
  const random = mulberry32(seed);
  const between = (lo, hi) => lo + (hi - lo) * random();
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

  const name = `${DATASET_KINDS[Math.floor(random() * DATASET_KINDS.length)]} ${1000 + Math.floor(random() * 9000)}`;
  const groupCount = 4 + Math.floor(random() * 3);
  const pool = [...GROUP_NAMES];
  for (let i = pool.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const groups = pool.slice(0, groupCount).map((groupName, id) => ({
    id,
    name: groupName,
    colour: GROUP_COLOURS[id].name,
    hex: GROUP_COLOURS[id].hex,
  }));
  const shapes = groups.map(() => ({
    weight: between(0.5, 1.5),
    cx: between(15, 85),
    cy: between(15, 85),
    sx: between(3, 9),
    sy: between(2, 7),
    tilt: between(-0.8, 0.8),
    score: between(35, 75),
    spread: between(5, 14),
  }));
  const total = shapes.reduce((a, s) => a + s.weight, 0);
  const pickGroup = () => {
    let r = random() * total;
    for (let g = 0; g < shapes.length; g += 1) {
      r -= shapes[g].weight;
      if (r < 0) return g;
    }
    return shapes.length - 1;
  };

  const itemCount = 280 + Math.floor(random() * 41);
  const items = [];
  for (let id = 1; id <= itemCount; id += 1) {
    const group = pickGroup();
    const s = shapes[group];
    const dx = normal() * s.sx;
    items.push({
      id,
      group,
      x: round(s.cx + dx, 2),
      y: round(s.cy + s.tilt * dx + normal() * s.sy, 2),
      score: round(s.score + 0.4 * dx + normal() * s.spread, 1),
      size: 1 + Math.floor(random() * 9),
    });
  }
  return { name, columns: COLUMNS, groups, items };
}

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (const unit of new TextEncoder().encode(text)) {
    h ^= unit;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
