
const KINDS = {
  string: (v) => typeof v === 'string',
  count: (v) => Number.isSafeInteger(v) && v >= 0,
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  bool: (v) => typeof v === 'boolean',
  list: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  any: () => true,
};

/** Whether a field's value is its default, so not written. */
const isDefault = (v, or) => v === undefined || v === or || (Array.isArray(or) && Array.isArray(v) && v.length === 0);

/** A message read from its text: `{ type, …fields }` (a missing field as its default), or null
 * when it is not one of `messages` (not JSON, an unknown type, a field missing or of another
 * kind, not exactly one of its EITHER fields). */
function read(messages, text) {
  let value;
  try { value = JSON.parse(text); } catch { return null; }
  if (!KINDS.object(value) || typeof value.type !== 'string' || !Object.hasOwn(messages, value.type)) return null;
  const message = { type: value.type };
  let eithers = 0;
  for (const [key, kind, or] of messages[value.type]) {
    const v = value[key];
    if (or === EITHER) {
      if (!Object.hasOwn(value, key)) continue;
      eithers += 1;
    } else if (or !== undefined && (v === undefined || v === null)) {
      message[key] = Array.isArray(or) ? [] : or;
      continue;
    }
    if (v === undefined || !KINDS[kind](v)) return null;
    message[key] = v;
  }
  const either = messages[value.type].some((f) => f[2] === EITHER);
  return either && eithers !== 1 ? null : message;
}

/** A message's text, `type` then its fields in their order (a default one left out); throws a
 * TypeError on a field missing or of another kind (the tab's own mistake). */
function write(messages, type, fields = {}) {
  if (!Object.hasOwn(messages, type)) throw new TypeError(`No message is called ${type}.`);
  const message = { type };
  let eithers = 0;
  for (const [key, kind, or] of messages[type]) {
    const v = fields[key];
    if (or === EITHER ? v === undefined : or !== undefined && isDefault(v, or)) continue;
    if (v === undefined || !KINDS[kind](v)) throw new TypeError(`A ${type} message's ${key} must be of kind ${kind}.`);
    if (or === EITHER) eithers += 1;
    message[key] = v;
  }
  if (messages[type].some((f) => f[2] === EITHER) && eithers !== 1) throw new TypeError(`A ${type} message takes one of its alternatives.`);
  return JSON.stringify(message);
}

/** A relay's message read from its text (null: not one). */
export const readRelay = (text) => read(RELAY_MESSAGES, text);
/** A tab's message written: `writeTab('focus', { focused: true })`. */
export const writeTab = (type, fields) => write(TAB_MESSAGES, type, fields);
/** A tab's message read (null: not one): the relay's side, for tests. */
export const readTab = (text) => read(TAB_MESSAGES, text);
/** A relay's message written: the relay's side, for tests. */
export const writeRelay = (type, fields) => write(RELAY_MESSAGES, type, fields);
