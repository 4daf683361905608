// The person's side, drawn: custom elements over a presence (./presence.js), each in an open
// shadow root with stable `part`s an app styles (`tabrelay-confirm-card::part(deny)`).
//
//   import { createPresence } from './presence.js';
//   import './presence-elements.js';
//   document.querySelector('tabrelay-confirm-card').presence = presence;
//   document.querySelector('tabrelay-activity').presence = presence;
//   document.querySelector('tabrelay-permissions').presence = presence;
//
// <tabrelay-confirm-card>: the oldest question: what it asks and the tool's title first, who asks
// (the agent, its connection, verified domain or not), why (each kind asked about), what it is
// given, the tool's own description under Details; Deny, and each grant in words (what, to whom,
// until when: the presence's `choices`), kept in sight at its foot. Its buttons wait
// CARD_ARM_MS so a click meant for something else cannot answer it; every card shown takes the
// focus and comes into view unless the person is typing (a field holding text), on Deny once
// armed; `showQuestion()` (the banner's "Show the question") brings it to them; Escape denies
// it wherever the focus is unless they type. Answered or withdrawn (the agent cancelled, Stop,
// another dataset, the tab closing), the focus goes back to the field it came from, else to
// `returnFocus` (the activity lines), never to a button nor the page's body.
// <tabrelay-activity>: one line per agent turn: what runs and Stop; once done with steps,
// Undo turn and Dismiss. The lines are newest first, those acting or stopped before the
// finished ones; finished turns beyond FINISHED_SHOWN fold behind a button that counts them
// (part `fold`); where an agent's connection returns to is said once, on its first line. Stop
// stops the agent: its lines say "Stopped" with Let it go on until the person presses it. After
// a press the focus stays on the same line (never on another turn's Undo), or on the list when
// the pressed button went and the line has no safe control left (after Let it go on, never its
// Dismiss); Undo turn of any but the newest turn asks first, on its line; a turn whose steps
// were another dataset's says at once that it cannot be undone.
// <tabrelay-permissions>: the mode (Custom once a kind's rule changed; choosing one says it takes
// the grants back) and each kind's Ask / Allow / Deny.
// <tabrelay-grants>: every grant, under all agents or its connection, with what, until when and
// Revoke; Revoke all asks first (Keep them has the focus).
// <tabrelay-connections>: the agent apps connected to this browser (set `relay`, a RelayClient),
// each with when and where it was made and Forget (its tokens stop at once: it asks first, Keep
// it has the focus); Refresh. After a press whose button went, the focus is on Refresh.
// <tabrelay-data-switch>: the dataset's switch "Agents see names and summaries only" (the
// person's alone), the notice of what agents are sent (once per dataset, until Got it) and
// that summaries of very small groups can still reveal values; once another dataset is shown,
// what the switch is for it. Set `dataSwitch` (from ./data-guard.js createDataSwitch) and
// `datasetId` (the shown dataset's identity).

import { MODES, DECISIONS, modeDecision, MODE_CHOICE, CUSTOM_MODE, UNTIL, ALL_AGENTS, answerNeedsPresence } from './presence.js';
import { PRESENCE, PRESENCE_SENTENCES } from './presence-check.js';

const PRESENCE_ASKING = PRESENCE_SENTENCES.ASKING;
import { DATA_SENTENCES } from './data-guard.js';
import { WHO_ASKS, shownText } from './generated/bundle.js';

/** How a card says the weight of what it asks: a read and an undoable change are neutral, irreversible red. */
export const RISK_WORDS = Object.freeze({
  read: 'It only reads: nothing is changed.',
  undoable: 'It changes what the tab shows; you can undo it.',
  // The app's kind, not the tab end's guess: the tool's own words may say how it is undone.
  irreversible: 'Take care: this app counts it as a change that may not be taken back.',
});
/** A new card's buttons wait this long, so a click meant for the card before cannot answer it. */
export const CARD_ARM_MS = 350;
/** The most characters of a name from outside a card shows. */
export const NAME_CHARS = 80;
/** How each decision reads in the permissions. */
export const DECISION_WORDS = Object.freeze({ allow: 'Allow', ask: 'Ask', deny: 'Deny' });
/** "5 min. ago", in the person's locale. */
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
/** Each unit of a relative time and how many of it make the next. */
const TIME_UNITS = [['second', 60], ['minute', 60], ['hour', 24], ['day', 30], ['month', 12], ['year', Infinity]];
/** The connections' relative times are written again this often. */
export const CONNECTIONS_AGE_MS = 60_000;

/** How long ago `ms` (milliseconds since the epoch) was, e.g. "5 min. ago", in the person's locale. */
export function ago(ms, now = Date.now()) {
  if (!Number.isFinite(ms)) return 'at an unknown time';
  let n = Math.round((ms - now) / 1000);
  if (n > -45) return RELATIVE.format(0, 'second');
  for (const [unit, next] of TIME_UNITS) {
    if (Math.abs(n) < next) return RELATIVE.format(n, unit);
    n = Math.round(n / next);
  }
  return RELATIVE.format(n, 'year');
}

function localTime(ms) {
  return Number.isFinite(ms) ? new Date(ms).toLocaleString() : 'at an unknown time';
}

/** Text from outside as the elements show it: one line, no control or format characters, cut. */
export function shown(text, chars = NAME_CHARS) {
  return shownText(text, chars);
}

/** An argument's name as words: "permutations" → "Permutations", "group_ids" → "Group ids". */
function argName(key) {
  const words = String(key).replace(/[-_]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Up to ten values, "4, 7 and 9" or "1, 2, … and 14 more". */
function listedWords(values) {
  if (!values.length) return 'none';
  const head = values.slice(0, 10);
  const more = values.length - head.length;
  if (more > 0) return `${head.join(', ')} and ${more} more`;
  return head.length === 1 ? head[0] : `${head.slice(0, -1).join(', ')} and ${head[head.length - 1]}`;
}

/** A value given to a tool, in words (no JSON): text in quotes, lists as lists, objects as "name: value". */
export function valueInWords(value, depth = 0) {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return `“${shown(value)}”`;
  if (typeof value === 'number' || typeof value === 'bigint') return Number.isFinite(Number(value)) ? Number(value).toLocaleString('en') : String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (depth >= 2) return Array.isArray(value) ? `a list of ${value.length}` : 'more details';
  if (Array.isArray(value)) return listedWords(value.map((v) => valueInWords(v, depth + 1)));
  if (typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) => `${argName(k).toLowerCase()} ${valueInWords(v, depth + 1)}`);
    return parts.length ? `(${parts.join('; ')})` : 'nothing';
  }
  return 'a value of another kind';
}

/** A call's arguments as lines of words: [["Ids", "4, 7 and 9"], …]. */
export function argsInWords(args) {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args == null ? [] : [['Given', shown(valueInWords(args), 400)]];
  return Object.entries(args).map(([k, v]) => [shown(argName(k)), shown(valueInWords(v), 400)]);
}

/** Seconds, in words: "4 s", "2 min 5 s". */
export function secondsWords(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** How long a running call has run, with the app's estimate for a heavy one. */
export function runningWords(line, now = Date.now()) {
  const ran = Number.isFinite(line.startedMs) ? ` for ${secondsWords(now - line.startedMs)}` : '';
  const estimate = Number.isFinite(line.estimateMs) ? ` (about ${secondsWords(line.estimateMs)} by this app’s measurements)` : '';
  return `${ran}${estimate}`;
}

/** What a line's turn read and changed, in words: the newest few. */
export function didWords(did) {
  if (!did?.length) return '';
  const shownDid = did.slice(-4).map((d) => d.words);
  const more = did.length - shownDid.length;
  return `${more > 0 ? `${more} earlier, then ` : ''}${shownDid.join('; ')}`;
}

/** Who asks, in words: the agent, its connection's app and host, verified or not. */
export function askerOf(call) {
  const agent = shown(call.agent || 'An agent');
  const c = call.connection;
  // An agent in this browser (./webmcp.js) has no app or host to name.
  if (!c || c.kind === 'browser') return agent;
  // The person's own chat in this tab (./chat.js): the model they chose, with their key.
  if (c.kind === 'chat') return `${agent} (your chat in this tab)`;
  const app = c.client && c.client !== call.agent ? ` via ${shown(c.client)}` : '';
  const where = c.verified ? `verified domain ${shown(c.verified)}` : `${c.host ? `returns to ${shown(c.host)}, ` : ''}name not verified`;
  return `${agent}${app} (${where})`;
}

/** The element that has the focus, inside shadow roots too (a field of the Agents panel, say). */
function deepActive() {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active;
}

/** Fields where keys are text, not commands. */
const TEXT_INPUTS = /^(text|search|email|url|tel|password|number)$/;

/**
 * Whether the person is typing in `el`: a text field or editable text that holds something. An
 * empty field (the code field after Enter approved, say), a select or a checkbox is not typing.
 */
export function typingIn(el) {
  if (!el) return false;
  if (el.isContentEditable) return Boolean(el.textContent?.trim());
  if (el.tagName === 'TEXTAREA') return el.value !== '';
  if (el.tagName === 'INPUT') return TEXT_INPUTS.test(el.type || 'text') && el.value !== '';
  return false;
}

/** Whether `el` is a field or select, where Escape is the field's own (no card is denied by it). */
function fieldOf(el) {
  return Boolean(el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)));
}

/**
 * Gives the focus to `target` (an element, or a function returning one) when it can take it:
 * where the focus goes once a pressed control went. Returns whether it did.
 */
export function focusOn(target) {
  const el = typeof target === 'function' ? target() : target;
  if (!el?.isConnected || el.hidden || el.disabled) return false;
  el.focus?.();
  let active = document.activeElement;
  while (active && active !== el && active.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active === el || el.contains?.(document.activeElement) || Boolean(el.shadowRoot?.activeElement);
}

const BASE_CSS = `
  :host { display: block; }
  :host([hidden]) { display: none; }
  button { font: inherit; padding: .35rem .8rem; border-radius: .3rem; border: 1px solid #0b5cad; background: #fff; color: #0b5cad; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  button:focus-visible, select:focus-visible, summary:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
`;

const Base = globalThis.HTMLElement || class {};

/** Shared: a `presence` property that redraws on every change. */
class PresenceElement extends Base {
  #presence = null;
  #unsubscribe = null;
  get presence() {
    return this.#presence;
  }
  set presence(presence) {
    this.#unsubscribe?.();
    this.#presence = presence;
    this.#unsubscribe = presence ? presence.subscribe(() => this.render()) : null;
    this.render();
  }
  disconnectedCallback() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }
  connectedCallback() {
    if (this.#presence && !this.#unsubscribe) this.#unsubscribe = this.#presence.subscribe(() => this.render());
    this.render();
  }
  render() {}
}

export class ConfirmCard extends PresenceElement {
  #shownId = null;
  #focusBefore = null;
  #root;
  /**
   * Where the focus goes once the card is answered or withdrawn, when it did not come from a
   * field: an element or a function returning one (createTabrelay sets the activity lines).
   */
  returnFocus = null;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      :host { scroll-margin: 1rem 0 4rem; }
      [part=card] { padding: .75rem; border: 2px solid #8a8a90; border-radius: .4rem; background: #fff; }
      [part=card][data-risk=irreversible] { border-color: #b3261e; background: #fff8f7; }
      [part=risk] { font-weight: 600; }
      [part=card][data-risk=irreversible] [part=risk] { color: #b3261e; }
      [part=args] li { list-style: none; }
      [part=args] { padding-left: 0; }
      h3 { margin: 0 0 .25rem; font-size: 1rem; overflow-wrap: anywhere; }
      p, ul { margin: 0 0 .35rem; overflow-wrap: anywhere; }
      ul { padding-left: 1.2rem; }
      /* Why and what it is given read as lines of text, not lists a screen tall. */
      #why, [part=details] { margin: 0 0 .35rem; overflow-wrap: anywhere; }
      #why p, [part=given-title] { display: inline; margin: 0; }
      [part=why], [part=args] { display: inline; margin: 0; padding: 0; }
      [part=why] li, [part=args] li { display: inline; list-style: none; }
      [part=why] li + li::before, [part=args] li + li::before { content: "; "; }
      [part=items] { margin: .35rem 0 0; }
      [part=about] { margin: 0 0 .35rem; font-size: .9rem; }
      [part=about] summary { cursor: pointer; color: #0b5cad; }
      [part=about] p { margin: .25rem 0 0; }
      /* Deny and Allow once side by side, each grant a row of its own; they stay in sight at the
         foot of the card (or of a sheet that scrolls) while what is above them scrolls. */
      [part=choices] { display: grid; grid-template-columns: 1fr 1fr; gap: .4rem; padding: .4rem 0 .1rem; position: sticky; bottom: 0; background: inherit; }
      [part=connection], [part=always] { grid-column: 1 / -1; font-size: .9rem; padding: .3rem .6rem; }
      [part=once] { background: #0b5cad; border-color: #0b5cad; color: #fff; }
      [part=card][data-risk=irreversible] [part=once] { background: #b3261e; border-color: #b3261e; }
      [part=more] { color: #5b5b60; font-size: .9rem; margin: .5rem 0 0; }
      [part=more]:empty { display: none; }
      [part=presence] { margin: .5rem 0 0; font-size: .9rem; }
      [part=presence]:empty { display: none; }
    </style>
    <div part="card" role="alertdialog" aria-modal="false" aria-labelledby="what" aria-describedby="risk who why" tabindex="-1">
      <h3 part="what" id="what"></h3>
      <p part="tool"></p>
      <p part="risk" id="risk"></p>
      <p part="who" id="who"></p>
      <div id="why"><p>Asked because: </p><ul part="why"></ul></div>
      <div part="details"><p part="given-title">What it is given: </p><ul part="args"></ul><p part="items"></p></div>
      <details part="about"><summary part="about-title">Details: what the tool says it does</summary><p part="description"></p></details>
      <div part="choices">
        <button part="deny" type="button" data-choice="deny"></button>
        <button part="once" type="button" data-choice="once"></button>
        <button part="connection" type="button" data-choice="connection"></button>
        <button part="always" type="button" data-choice="always"></button>
      </div>
      <p part="presence" role="status" aria-live="polite"></p>
      <p part="more" aria-live="polite"></p>
    </div>`;
    this.#root.addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-choice]');
      if (button && !button.disabled) this.#answer(button.dataset.choice);
    });
    this.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.#shownId != null) {
        event.preventDefault();
        this.#answer('deny');
      }
    });
  }

  /**
   * Escape anywhere denies the card shown, focused or not, unless the person is typing (a field
   * that holds text) or something shown since took the Escape (a question of its own).
   */
  #onDocumentKey = (event) => {
    if (event.key !== 'Escape' || this.#shownId == null || event.defaultPrevented) return;
    if (typingIn(deepActive())) return;
    event.preventDefault();
    this.#answer('deny');
  };

  connectedCallback() {
    super.connectedCallback();
    document.addEventListener('keydown', this.#onDocumentKey);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener('keydown', this.#onDocumentKey);
  }

  #answer(choice) {
    if (this.#shownId != null) this.presence?.answer(this.#shownId, choice);
  }

  /** Brings the card into view (a fixed sheet is already). */
  #reveal() {
    if (getComputedStyle(this).position !== 'fixed') this.scrollIntoView({ block: 'nearest' });
  }

  /**
   * Shows the question waiting: the card scrolled into view with the focus on it (on Deny once
   * its buttons are armed). The banner's "Show the question" presses this. Returns whether a
   * question shows.
   */
  showQuestion() {
    if (this.#shownId == null || this.hidden) return false;
    // The person left where they were for the question: once answered, the focus stays near it.
    this.#focusBefore = null;
    const deny = this.#root.querySelector('[part=deny]');
    (deny.disabled ? this.#root.querySelector('[part=card]') : deny).focus({ preventScroll: true });
    this.#reveal();
    return true;
  }

  render() {
    const q = this.presence?.questions()[0];
    if (!q) {
      const hadFocus = this.matches(':focus-within');
      this.hidden = true;
      this.#shownId = null;
      if (hadFocus) {
        // Back to the field the person was in; never to a button (a second Enter there could
        // act, on another turn's Undo or a Forget, when the card's answer never meant it): then
        // to the named control the app gave (the activity lines), else nowhere.
        const before = this.#focusBefore;
        const field = fieldOf(before) ? before : null;
        if (!focusOn(field) && !focusOn(this.returnFocus)) this.blur?.();
      }
      this.#focusBefore = null;
      return;
    }
    // What the person's device is asked, or said (./presence-check.js): the card stays until
    // an answer that needs their presence was confirmed by it.
    const power = (q.choices || []).some((c) => answerNeedsPresence(q.risk, c.choice));
    this.#root.querySelector('[part=presence]').textContent = q.proving
      ? PRESENCE_ASKING
      : q.presenceRefused || (power && this.presence.presenceState === 'without' ? PRESENCE_SENTENCES.WITHOUT_DEVICE : '');
    const more = this.presence.questions().length - 1;
    this.#root.querySelector('[part=more]').textContent = more > 0 ? `${more} more waiting after this one.` : '';
    if (q.id === this.#shownId) return;
    const first = this.#shownId == null;
    this.#shownId = q.id;
    this.#root.querySelector('[part=what]').textContent = shown(q.sentence, 400);
    const card = this.#root.querySelector('[part=card]');
    card.dataset.risk = RISK_WORDS[q.risk] ? q.risk : 'undoable';
    this.#root.querySelector('[part=risk]').textContent = RISK_WORDS[card.dataset.risk];
    this.#root.querySelector('[part=tool]').textContent = `Tool: ${shown(q.title)}`;
    // The tool's own description is under Details: the card is sized for a person to decide.
    const about = this.#root.querySelector('[part=about]');
    about.open = false;
    about.hidden = !q.description;
    this.#root.querySelector('[part=description]').textContent = q.description ? shown(q.description, 400) : '';
    this.#root.querySelector('[part=who]').textContent = `Who asks: ${askerOf(q.call)}`;
    this.#root.querySelector('[part=why]').replaceChildren(
      ...q.why.map((w, i) => {
        const li = document.createElement('li');
        li.textContent = q.kindNames?.[i] ? `${q.kindNames[i]}: ${w}` : w;
        return li;
      }),
    );
    const given = argsInWords(q.call.args);
    this.#root.querySelector('[part=args]').replaceChildren(
      ...(given.length ? given : [['Nothing', 'no details']]).map(([name, words]) => {
        const li = document.createElement('li');
        li.textContent = `${name}: ${words}`;
        return li;
      }),
    );
    const items = this.#root.querySelector('[part=items]');
    const named = q.items || [];
    items.textContent = named.length ? `It names ${named.length === 1 ? 'item' : `${named.length} items`} ${listedWords(named.map((x) => shown(x)))}; the app marks ${named.length === 1 ? 'it' : 'them'} on its view while you decide.` : '';
    items.hidden = !named.length;
    // Each button says what it grants, to whom and until when (the presence decides the words).
    const choices = new Map((q.choices || []).map((c) => [c.choice, c.words]));
    for (const b of this.#root.querySelectorAll('button[data-choice]')) {
      b.hidden = !choices.has(b.dataset.choice);
      b.textContent = choices.get(b.dataset.choice) ?? '';
    }
    this.hidden = false;
    const buttons = [...this.#root.querySelectorAll('button')];
    const active = deepActive();
    const inCard = this.contains(active) || this.shadowRoot.contains(active);
    // Every card shown takes the focus (and comes into view) unless the person is typing: a
    // field that holds text, being edited. The banner's "Show the question" reaches it then.
    const typing = !inCard && typingIn(active);
    if (first) this.#focusBefore = active;
    // While its buttons wait, the card itself holds the focus (a disabled button would drop it
    // to the page, where Escape and Tab no longer reach the card).
    if (!typing) {
      card.focus({ preventScroll: true });
      this.#reveal();
    }
    for (const b of buttons) b.disabled = true;
    setTimeout(() => {
      if (this.#shownId !== q.id) return;
      for (const b of buttons) b.disabled = false;
      // Deny, the safe answer, once armed, unless the person went elsewhere meanwhile.
      if (this.matches(':focus-within')) this.#root.querySelector('[part=deny]').focus({ preventScroll: true });
    }, CARD_ARM_MS);
  }
}

/**
 * Where the focus goes on a line whose pressed button went: its safest control, else the list
 * itself; never a control that takes something away (Undo turn, Dismiss): after Let it go on,
 * a second Enter would dismiss the line.
 */
const LINE_FOCUS_ORDER = ['keep', 'go-on', 'stop'];
/** How many finished turns show before the older ones fold (behind a count and a button). */
export const FINISHED_SHOWN = 3;

/**
 * The lines in the order they show, and which of them show: those acting or stopped first (a
 * stopped agent's newest line only), then the finished ones, each newest first; the finished ones beyond FINISHED_SHOWN fold unless
 * `unfolded`, except a line in `keep` (the one with the focus, or asking about its Undo turn).
 * Returns {shown, folded: how many finished lines fold}.
 */
export function linesShown(lines, { unfolded = false, keep = [] } = {}) {
  // A stopped agent is said stopped, with Let it go on, once: on its newest line; its older
  // finished turns read as they ended and fold with the others.
  const holding = new Set();
  const newest = [...lines].reverse().map((l) => {
    if (!l.held) return l;
    const id = String(l.connection?.id ?? l.agent);
    if (!holding.has(id)) {
      holding.add(id);
      return l;
    }
    return { ...l, held: false };
  });
  const acting = newest.filter((l) => !l.done || l.held);
  const finished = newest.filter((l) => l.done && !l.held);
  const fold = unfolded ? [] : finished.slice(FINISHED_SHOWN).filter((l) => !keep.includes(l.key));
  return { shown: [...acting, ...finished.filter((l) => !fold.includes(l))], folded: finished.length > FINISHED_SHOWN ? finished.length - FINISHED_SHOWN : 0 };
}

export class ActivityLines extends PresenceElement {
  #root;
  #ticker = null;
  /** The line whose Undo turn asks first ("Undo anyway" / "Keep it"), or null. */
  #confirmingUndo = null;
  /** The line pressed last: where the focus stays when its button goes. */
  #pressedLine = null;
  /** Whether the person asked to see the older finished turns. */
  #unfolded = false;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      ul { list-style: none; margin: 0; padding: 0; }
      li { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; justify-content: space-between; padding: .4rem 0; border-top: 1px solid #d8d8dc; }
      li:first-child { border-top: 0; }
      [part~=text] { overflow-wrap: anywhere; }
      [part~=buttons] { display: flex; gap: .5rem; }
      [part~=ask-undo] { width: 100%; margin: 0; font-weight: 600; }
      [part=presence]:empty { display: none; }
      [part=fold] { margin-top: .4rem; }
      [part=fold][hidden] { display: none; }
    </style><ul part="lines" aria-live="polite" aria-label="What agents are doing, newest first" tabindex="-1"></ul>
    <button part="fold" type="button" aria-expanded="false" hidden></button>
    <p part="presence" role="status" aria-live="polite"></p>`;
    this.#root.querySelector('[part=fold]').addEventListener('click', () => {
      this.#unfolded = !this.#unfolded;
      this.render();
    });
    this.#root.addEventListener('click', (event) => {
      const b = event.target.closest?.('button[data-line]');
      if (!b || !this.presence) return;
      const key = b.dataset.line;
      this.#pressedLine = key;
      const act = b.dataset.act;
      if (act !== 'undo' && act !== 'undo-anyway') this.#confirmingUndo = null;
      if (act === 'stop') this.presence.stop(key);
      if (act === 'go-on') {
        // Letting a stopped agent go on gives it power back: the person's device confirms it.
        const id = this.presence.lines().find((l) => l.key === key)?.connection?.id;
        const said = this.#root.querySelector('[part=presence]');
        said.textContent = this.presence.presenceState === 'device' ? PRESENCE_ASKING : '';
        this.presence.confirmed(PRESENCE.SETTING, `go on\n${id}`).then((refused) => {
          said.textContent = refused;
          if (!refused) this.presence.goOn(id);
        });
      }
      if (act === 'undo') {
        // A turn under a later one's steps is undone only on a second, explicit yes.
        if (this.presence.undoAsks(key)) {
          this.#confirmingUndo = key;
          this.render();
          this.#buttonOf(key, 'keep')?.focus();
        } else this.presence.undoTurn(key);
      }
      if (act === 'undo-anyway') {
        this.#confirmingUndo = null;
        this.presence.undoTurn(key, { confirmed: true });
      }
      if (act === 'keep') {
        this.#confirmingUndo = null;
        this.render();
        // Back on the line's Undo turn, which asks again if pressed.
        this.#buttonOf(key, 'undo')?.focus();
      }
      if (act === 'dismiss') this.presence.dismiss(key);
      // The pressed button may be gone: the focus stays on its line (see render).
      if (!b.isConnected && this.#root.activeElement?.dataset?.line !== key) this.#refocus(key);
    });
  }

  /** The focus goes to the list (named "What agents are doing"), never to one of its buttons. */
  focus(options) {
    this.#root.querySelector('[part=lines]').focus(options);
  }

  /** While a call runs, its running time is written again every second. */
  #tick(running) {
    if (!running) {
      clearInterval(this.#ticker);
      this.#ticker = null;
      return;
    }
    this.#ticker ??= setInterval(() => {
      if (!this.isConnected) return;
      for (const span of this.#root.querySelectorAll('[part=elapsed]')) {
        const started = span.dataset.started === '' ? NaN : Number(span.dataset.started);
        const estimate = span.dataset.estimate === '' ? NaN : Number(span.dataset.estimate);
        span.textContent = runningWords({ startedMs: started, estimateMs: estimate });
      }
    }, 1000);
  }

  /** Line `key`'s button `act` (a key holds characters a selector cannot). */
  #buttonOf(key, act) {
    return [...this.#root.querySelectorAll('button')].find((b) => b.dataset.line === key && b.dataset.act === act) ?? null;
  }

  /** The pressed button of line `key` went: the focus goes to a safe control of that line, else the list. */
  #refocus(key) {
    const ul = this.#root.querySelector('[part=lines]');
    const ofLine = [...ul.querySelectorAll('button')].filter((b) => b.dataset.line === key);
    const next = LINE_FOCUS_ORDER.map((act) => ofLine.find((b) => b.dataset.act === act)).find(Boolean);
    (next || ul).focus();
  }

  render() {
    const ul = this.#root.querySelector('[part=lines]');
    const lines = this.presence?.lines() || [];
    const focused = this.#root.activeElement;
    const focusedAt = focused?.dataset?.line != null ? `${focused.dataset.line}|${focused.dataset.act}` : null;
    const focusedLine = focused?.dataset?.line ?? null;
    if (this.#confirmingUndo && !lines.some((l) => l.key === this.#confirmingUndo && l.done && !l.undone && l.undoable !== false)) this.#confirmingUndo = null;
    this.hidden = !lines.length;
    const keep = [focusedLine, this.#confirmingUndo].filter((k) => k != null);
    const { shown: showing, folded } = linesShown(lines, { unfolded: this.#unfolded, keep });
    const fold = this.#root.querySelector('[part=fold]');
    fold.hidden = folded === 0;
    if (!folded) this.#unfolded = false;
    const turns = folded === 1 ? '1 older finished turn' : `${folded} older finished turns`;
    fold.textContent = this.#unfolded ? `Hide ${turns}` : `Show ${turns}`;
    fold.setAttribute('aria-expanded', String(this.#unfolded));
    // Where an agent's connection returns to is said once, on its first line shown.
    const placed = new Set();
    ul.replaceChildren(
      ...showing.map((line) => {
        const li = document.createElement('li');
        li.setAttribute('part', `line ${line.done ? 'done' : 'acting'}`);
        li.dataset.line = line.key;
        const text = document.createElement('span');
        text.setAttribute('part', 'text');
        const place = line.connection?.id != null ? `c:${line.connection.id}` : `a:${line.agent}`;
        const who = placed.has(place) ? shown(line.agent) : askerOf({ agent: line.agent, connection: line.connection });
        placed.add(place);
        const steps = line.steps.length === 1 ? '1 step' : `${line.steps.length} steps`;
        const did = didWords(line.did);
        const state = line.held
          ? `stopped: its calls are refused until you let it go on${line.steps.length ? ` (${steps} before)` : ''}`
          : line.stopped
          ? `stopped${line.steps.length ? ` after ${steps}` : ''}`
          : !line.done
            ? `${line.running ? `running ${shown(line.running)}` : 'waiting'}`
            : line.undone
              ? `${steps}, undone`
              : line.steps.length
                ? `done, ${steps}`
                : 'done';
        text.append(`${who}: ${state}`);
        if (!line.done && line.running && !line.stopped) {
          // The running time, written again each second (a timer: screen readers are not told each tick).
          const elapsed = document.createElement('span');
          elapsed.setAttribute('part', 'elapsed');
          elapsed.setAttribute('role', 'timer');
          elapsed.dataset.started = String(line.startedMs ?? '');
          elapsed.dataset.estimate = String(line.estimateMs ?? '');
          elapsed.textContent = runningWords(line);
          text.append(elapsed);
        }
        const saying = [];
        if (did) saying.push(line.done ? did : `so far: ${did}`);
        else if (line.done) saying.push('nothing read or changed');
        if (line.undoSaid) saying.push(shown(line.undoSaid, 300));
        if (saying.length) text.append(` — ${saying.join('. ')}`);
        const buttons = document.createElement('span');
        buttons.setAttribute('part', 'buttons');
        const button = (act, words, label) => {
          const b = document.createElement('button');
          b.type = 'button';
          b.dataset.line = line.key;
          b.dataset.act = act;
          b.setAttribute('part', act);
          b.textContent = words;
          b.setAttribute('aria-label', `${words}: ${label}`);
          buttons.append(b);
        };
        const label = `${shown(line.agent)}, turn ${line.turn ?? ''}`;
        if (this.#confirmingUndo === line.key) {
          const ask = document.createElement('p');
          ask.setAttribute('part', 'ask-undo');
          ask.textContent = `Undo this older turn (${steps})? A later turn changed things after it; undoing this one may take back what the later turn relied on.`;
          li.append(text, ask, buttons);
          button('keep', 'Keep it', label);
          button('undo-anyway', 'Undo anyway', label);
          return li;
        }
        if (line.held) button('go-on', 'Let it go on', label);
        if (!line.done && !line.held) button('stop', 'Stop', label);
        else if (line.done) {
          if (line.steps.length && !line.undone && line.undoable !== false && this.presence.canUndo) button('undo', 'Undo turn', label);
          button('dismiss', 'Dismiss', label);
        }
        li.append(text, buttons);
        return li;
      }),
    );
    this.#tick(lines.some((l) => !l.done && l.running && !l.stopped));
    if (focusedAt) {
      // The same button again, else a safe control of the same line, else the list: never
      // another turn's button.
      const again = [...ul.querySelectorAll('button')].find((b) => `${b.dataset.line}|${b.dataset.act}` === focusedAt);
      if (again) again.focus();
      else this.#refocus(focusedLine);
    }
  }
}

export class PermissionSettings extends PresenceElement {
  #root;
  /** The rules the result line was written for: once they change, it is no longer true and goes. */
  #resultFor = null;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      label { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, auto); gap: .25rem .75rem; align-items: center; padding: .3rem 0; }
      /* A select is as wide as its longest option, hidden ones too ("Custom (from …)"): never wider than its row. */
      select { font: inherit; padding: .2rem .3rem; border: 1px solid #8a8a90; border-radius: .3rem; background: #fff; max-width: 100%; min-width: 0; }
      [part=kinds] { margin: .25rem 0 0; padding: 0; border: 0; }
      legend { padding: 0; font-weight: 600; }
      [part=mode-hint], [part=mode-result] { margin: .1rem 0 .25rem; color: #5b5b60; font-size: .85rem; }
      [part=mode-result]:empty { margin: 0; }
    </style>
    <label part="mode-row">Mode <select part="mode" data-mode aria-describedby="mode-hint"></select></label>
    <p part="mode-hint" id="mode-hint"></p>
    <p part="mode-result" aria-live="polite"></p>
    <fieldset part="kinds"><legend>Each kind of call</legend><div part="kind-rows"></div></fieldset>`;
    const mode = this.#root.querySelector('[part=mode]');
    for (const [value, preset] of Object.entries(MODES)) mode.append(new Option(preset.title, value));
    // Shown (and chosen) only while a kind's rule differs from the mode's: choosing any mode,
    // the one it came from too, then sets every kind as that mode says.
    const custom = new Option(CUSTOM_MODE, 'custom');
    custom.disabled = true;
    mode.append(custom);
    this.#root.querySelector('[part=mode-hint]').textContent = MODE_CHOICE;
    this.#root.addEventListener('change', (event) => {
      const select = event.target;
      if (!this.presence) return;
      const result = this.#root.querySelector('[part=mode-result]');
      const change = select.dataset.mode !== undefined ? { mode: select.value } : { kind: select.dataset.kind, decision: select.value };
      if (select.dataset.mode !== undefined && !Object.hasOwn(MODES, select.value)) return;
      if (select.dataset.mode === undefined && !select.dataset.kind) return;
      // A looser mode or rule gives agents power: only once the person's device confirmed it.
      const looser = this.presence.loosens(change);
      const asked = looser ? this.presence.confirmed(PRESENCE.SETTING, JSON.stringify(change)) : Promise.resolve('');
      if (looser) result.textContent = PRESENCE_ASKING;
      asked.then((refused) => {
        if (refused) {
          result.textContent = refused;
          this.render(); // the select shows the rule kept
        } else if (change.mode) {
          const taken = this.presence.chooseMode(change.mode);
          result.textContent = `Mode “${MODES[change.mode].title}”: every kind as it says; ${
            taken === 0 ? 'there was no grant to take back' : taken === 1 ? '1 grant taken back' : `${taken} grants taken back`
          }.`;
          this.#resultFor = this.#rules();
        } else {
          this.presence.store.setKind(change.kind, change.decision);
          if (result.textContent === PRESENCE_ASKING) result.textContent = '';
        }
      });
    });
  }

  /** The mode and each kind's rule now, as one text. */
  #rules() {
    const settings = this.presence.settings();
    return JSON.stringify([settings.mode, this.presence.isCustom(), this.presence.kinds().map((k) => settings.kinds[k] ?? null)]);
  }

  render() {
    if (!this.presence) return;
    // A mode's result says what choosing it did: once a rule changed since (here or in another
    // tab: Custom, another mode), it is no longer what the rules are, and goes.
    const result = this.#root.querySelector('[part=mode-result]');
    if (this.#resultFor !== null && this.#resultFor !== this.#rules()) {
      this.#resultFor = null;
      if (result.textContent !== PRESENCE_ASKING) result.textContent = '';
    }
    const settings = this.presence.settings();
    const custom = this.presence.isCustom();
    const mode = this.#root.querySelector('[part=mode]');
    mode.querySelector('option[value=custom]').hidden = !custom;
    mode.querySelector('option[value=custom]').textContent = `${CUSTOM_MODE} (from “${MODES[settings.mode].title}”, with kinds changed)`;
    mode.value = custom ? 'custom' : settings.mode;
    const rows = this.#root.querySelector('[part=kind-rows]');
    const kinds = this.presence.kinds();
    if (rows.children.length !== kinds.length) {
      rows.replaceChildren(
        ...kinds.map((kind) => {
          const label = document.createElement('label');
          label.setAttribute('part', 'kind-row');
          const words = document.createElement('span');
          words.textContent = `${this.presence.nameOf ? this.presence.nameOf(kind) : kind}: ${this.presence.wordsOf(kind)}`;
          const select = document.createElement('select');
          select.dataset.kind = kind;
          select.setAttribute('part', 'kind');
          for (const d of DECISIONS) select.append(new Option(DECISION_WORDS[d], d));
          label.append(words, select);
          return label;
        }),
      );
    }
    for (const select of rows.querySelectorAll('select')) {
      const d = settings.kinds[select.dataset.kind];
      select.value = d ?? modeDecision(settings.mode, select.dataset.kind);
    }
  }
}

/**
 * <tabrelay-grants>: every grant the person made on a card, under "All agents" or its
 * connection (named as the connections list names it, set `connections`), each saying what it
 * allows and until when, with Revoke.
 */
export class GrantsList extends PresenceElement {
  #root;
  #connections = [];
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      h3 { margin: 0; font-size: 1rem; }
      h4 { margin: .5rem 0 0; font-size: .9rem; overflow-wrap: anywhere; }
      ul { list-style: none; margin: .25rem 0 0; padding: 0; font-size: .9rem; }
      li { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; justify-content: space-between; padding: .3rem 0; border-top: 1px solid #d8d8dc; }
      [part=grant-text] { overflow-wrap: anywhere; }
      button { padding: .2rem .6rem; font-size: .9rem; }
      p { margin: .5rem 0 0; color: #5b5b60; font-size: .9rem; }
      [part=result]:empty { margin: 0; }
      [part=revoke-all] { margin-top: .5rem; }
      [part=revoke-all-ask] { color: #1d1d1f; font-weight: 600; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
      [part=revoke-all-ask][hidden] { display: none; }
      [part=revoke-all-yes] { border-color: #b3261e; color: #b3261e; }
    </style>
    <h3 part="title" id="grants-title" tabindex="-1">Grants</h3>
    <div part="groups" aria-labelledby="grants-title"></div>
    <button part="revoke-all" type="button">Revoke all grants</button>
    <p part="revoke-all-ask" role="alertdialog" aria-labelledby="revoke-all-words" hidden><span id="revoke-all-words"></span><button part="revoke-all-yes" type="button">Revoke all</button><button part="revoke-all-no" type="button">Keep them</button></p>
    <p part="empty">Nothing is allowed beyond the mode: each Allow you press on a card for more than one call shows here, with Revoke.</p>
    <p part="result" aria-live="polite"></p>`;
    // Revoke all cannot be taken back: it asks first, with the focus on Keep them.
    const ask = this.#root.querySelector('[part=revoke-all-ask]');
    this.#root.querySelector('[part=revoke-all]').addEventListener('click', () => {
      if (!this.presence) return;
      const count = this.presence.grants().length;
      this.#root.getElementById('revoke-all-words').textContent = `Revoke all ${count === 1 ? '1 grant' : `${count} grants`}? Each card asks again; this cannot be undone.`;
      ask.hidden = false;
      this.#root.querySelector('[part=revoke-all-no]').focus();
    });
    // Keep them: nothing revoked; the focus goes to the heading, not back to Revoke all.
    const keep = () => {
      ask.hidden = true;
      this.#root.querySelector('[part=title]').focus();
    };
    this.#root.querySelector('[part=revoke-all-no]').addEventListener('click', keep);
    ask.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      keep();
    });
    this.#root.querySelector('[part=revoke-all-yes]').addEventListener('click', () => {
      ask.hidden = true;
      if (!this.presence) return;
      const count = this.presence.revokeAll();
      this.#root.querySelector('[part=result]').textContent = `Revoked ${count === 1 ? '1 grant' : `${count} grants`}: each card asks again.`;
      this.#root.querySelector('[part=title]').focus();
    });
    this.#root.querySelector('[part=groups]').addEventListener('click', (event) => {
      const b = event.target.closest?.('button[part=revoke]');
      if (!b || !this.presence) return;
      const grant = this.presence.grants()[Number(b.dataset.at)];
      if (!grant || `${grant.scope}|${grant.tool}|${grant.until}` !== b.dataset.grant) return;
      const buttons = [...this.#root.querySelectorAll('button[part=revoke]')];
      const at = buttons.indexOf(b);
      this.presence.revoke(grant);
      this.#root.querySelector('[part=result]').textContent = `Revoked: “${shown(grant.title)}” for ${shown(grant.who)} asks again.`;
      // The pressed button went: the focus goes to the next Revoke, else the heading.
      const left = [...this.#root.querySelectorAll('button[part=revoke]')];
      (left[Math.min(at, left.length - 1)] || this.#root.querySelector('[part=title]')).focus();
    });
  }
  /** The connections as listed ([{id, client}]): a connection's grants are headed by its name. */
  get connections() {
    return this.#connections;
  }
  set connections(list) {
    this.#connections = Array.isArray(list) ? list : [];
    this.render();
  }
  render() {
    const groups = this.#root.querySelector('[part=groups]');
    if (!groups) return;
    const grants = this.presence?.grants() ?? [];
    const focusedGrant = this.#root.activeElement?.dataset?.grant ?? null;
    const byScope = new Map();
    grants.forEach((g, at) => {
      if (!byScope.has(g.scope)) byScope.set(g.scope, []);
      byScope.get(g.scope).push({ ...g, at });
    });
    groups.replaceChildren(
      ...[...byScope].map(([scope, list]) => {
        const section = document.createElement('section');
        section.setAttribute('part', 'group');
        section.dataset.scope = scope;
        const h = document.createElement('h4');
        h.setAttribute('part', 'who');
        const listed = this.#connections.find((c) => c.id === scope);
        h.textContent = scope === ALL_AGENTS ? 'All agents' : listed ? `${shown(listed.client || 'An agent app')} (this connection${listed.host ? `, returns to ${shown(listed.host)}` : ''})` : shown(list[0].who);
        const ul = document.createElement('ul');
        for (const g of list) {
          const li = document.createElement('li');
          li.setAttribute('part', 'grant');
          const text = document.createElement('span');
          text.setAttribute('part', 'grant-text');
          text.textContent = `“${shown(g.title)}” runs without a card ${UNTIL[g.until]}`;
          const b = document.createElement('button');
          b.type = 'button';
          b.setAttribute('part', 'revoke');
          b.dataset.at = String(g.at);
          b.dataset.grant = `${g.scope}|${g.tool}|${g.until}`;
          b.textContent = 'Revoke';
          b.setAttribute('aria-label', `Revoke: “${shown(g.title)}” for ${scope === ALL_AGENTS ? 'all agents' : shown(g.who)} ${UNTIL[g.until]}`);
          li.append(text, b);
          ul.append(li);
        }
        section.append(h, ul);
        return section;
      }),
    );
    this.#root.querySelector('[part=empty]').hidden = grants.length > 0;
    this.#root.querySelector('[part=revoke-all]').hidden = grants.length < 2;
    if (grants.length < 2) this.#root.querySelector('[part=revoke-all-ask]').hidden = true;
    if (focusedGrant) [...groups.querySelectorAll('button[part=revoke]')].find((b) => b.dataset.grant === focusedGrant)?.focus();
  }
}

/** What a Forget asks before it acts: it cannot be taken back. */
export const FORGET_ASK = 'Forget {name}? It can no longer act in this tab; this cannot be undone.';

export class ConnectionsList extends Base {
  #root;
  #relay = null;
  #list = null;
  /** The list object drawn last (the relay's, when it came from there). */
  #drawn = null;
  #unsubscribe = null;
  #timer = null;
  /** The connection whose Forget asks first ("Forget" / "Keep it"), or null. */
  #asking = null;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      [part=head] { display: flex; justify-content: space-between; align-items: baseline; gap: .5rem; }
      h3 { margin: 0; font-size: 1rem; }
      ul { list-style: none; margin: .5rem 0 0; padding: 0; font-size: .9rem; }
      li { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; justify-content: space-between; padding: .4rem 0; border-top: 1px solid #d8d8dc; }
      li:first-child { border-top: 0; }
      [part=who] { overflow-wrap: anywhere; }
      [part=unverified], [part=when] { display: block; color: #5b5b60; }
      button { padding: .2rem .6rem; font-size: .9rem; }
      p { margin: .5rem 0 0; color: #5b5b60; font-size: .9rem; min-height: 1.4em; }
      [part=forget-ask] { width: 100%; margin: 0; color: #1d1d1f; font-weight: 600; min-height: 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
      [part=forget-yes] { border-color: #b3261e; color: #b3261e; }
    </style>
    <div part="head"><h3 id="title">Connections</h3><button part="refresh" type="button">Refresh</button></div>
    <ul part="list" aria-labelledby="title"></ul>
    <p part="empty">The agent apps connected to this tab show here once it is connected to the relay.</p>
    <p part="result" aria-live="polite"></p>`;
    this.#root.querySelector('[part=refresh]').addEventListener('click', () => {
      this.#say('');
      this.refresh();
    });
    this.#root.querySelector('[part=list]').addEventListener('click', (event) => {
      // Forget cannot be taken back: it asks first, on its row, with the focus on Keep it.
      const button = event.target.closest?.('button[part=forget]');
      if (button) {
        this.#asking = button.dataset.id;
        this.render(this.#list);
        this.#buttonOf('forget-no', this.#asking)?.focus();
      }
      const yes = event.target.closest?.('button[part=forget-yes]');
      if (yes) this.#forget(yes);
      if (event.target.closest?.('button[part=forget-no]')) this.#keep();
      const goOn = event.target.closest?.('button[part=go-on]');
      if (goOn && this.#relay) this.#goOn(goOn.dataset.id);
    });
    this.#root.querySelector('[part=list]').addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.#asking != null) {
        event.preventDefault();
        this.#keep();
      }
    });
  }
  /** Keep it: the question goes and nothing is forgotten; the focus goes to Refresh (never Forget). */
  #keep() {
    this.#asking = null;
    this.render(this.#list);
    this.#root.querySelector('[part=refresh]').focus();
  }
  /** Button `part` of connection `id` (an id holds characters a selector cannot). */
  #buttonOf(part, id) {
    return [...this.#root.querySelectorAll(`button[part=${part}]`)].find((b) => b.dataset.id === id) ?? null;
  }
  /** Lets a stopped agent go on, once the person's device confirmed it (the presence's check). */
  async #goOn(id) {
    if (this.presence) {
      if (this.presence.presenceState === 'device') this.#say(PRESENCE_ASKING);
      const refused = await this.presence.confirmed(PRESENCE.SETTING, `go on\n${id}`);
      this.#say(refused);
      if (refused) return;
      this.presence.goOn(id);
    }
    this.#relay.letGoOn(id);
    this.refresh();
  }
  get relay() {
    return this.#relay;
  }
  set relay(value) {
    this.#relay = value;
    this.#follow();
  }
  /**
   * Follows the relay's list as it changes (a connection made, stopped, let go on or forgotten,
   * in any tab of the pairing): shown at once, no Refresh needed.
   */
  #follow() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    const relay = this.#relay;
    if (!relay?.subscribe) return;
    const show = () => {
      const list = relay.connectionsList;
      if (Array.isArray(list) && list !== this.#drawn) this.render(list);
    };
    this.#unsubscribe = relay.subscribe(show);
    show();
  }
  /** The connections as last listed, oldest first; null before the first list. */
  get list() {
    return this.#list;
  }
  connectedCallback() {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#list && this.render(this.#list), CONNECTIONS_AGE_MS);
    if (!this.#unsubscribe) this.#follow();
  }
  disconnectedCallback() {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }
  #say(text) {
    this.#root.querySelector('[part=result]').textContent = text;
  }
  /** Asks the relay for the connections and shows them. */
  async refresh() {
    if (!this.#relay) return this.#say('This page has no relay to ask.');
    try {
      this.render(await this.#relay.connections());
    } catch (err) {
      this.#say(err.message);
    }
    return undefined;
  }
  async #forget(button) {
    const id = button.dataset.id;
    const name = shown(this.#list?.find((c) => c.id === id)?.client || 'the agent app');
    button.disabled = true;
    try {
      const left = await this.#relay.forget(id);
      this.#asking = null;
      this.render(left);
      this.#say(`Forgot ${name}: it can no longer act in this tab.`);
      this.dispatchEvent(new CustomEvent('tabrelay-forgot', { detail: { id }, bubbles: true, composed: true }));
      // The pressed button is gone: the focus goes to Refresh, never to another connection's
      // Forget (a second Enter would forget it too).
      this.#root.querySelector('[part=refresh]').focus();
    } catch (err) {
      button.disabled = false;
      this.#say(`${name} was not forgotten: ${err.message}`);
    }
  }
  /**
   * Shows `list` (oldest first), keeping the focus on the button that had it; when that button
   * went (Let it go on, once the agent goes on), on Refresh: never on another button of the row.
   */
  render(list) {
    this.#drawn = list;
    this.#list = Array.isArray(list) ? list : [];
    const ul = this.#root.querySelector('[part=list]');
    const focusedId = this.#root.activeElement?.dataset?.id ?? null;
    const focusedPart = focusedId == null ? null : this.#root.activeElement.getAttribute('part');
    if (this.#asking != null && !this.#list.some((c) => c.id === this.#asking)) this.#asking = null;
    ul.replaceChildren(
      ...this.#list.map((c) => {
        const li = document.createElement('li');
        li.setAttribute('part', 'item');
        const who = document.createElement('span');
        who.setAttribute('part', 'who');
        const name = document.createElement('strong');
        name.textContent = shown(c.client || 'An agent app');
        const unverified = document.createElement('span');
        unverified.setAttribute('part', 'unverified');
        unverified.textContent = WHO_ASKS.NOT_VERIFIED;
        const when = document.createElement('span');
        when.setAttribute('part', 'when');
        // The place is said only when the relay knows it: "not known" on every row teaches nothing.
        const from = c.place ? ` from ${shown(c.place)}` : '';
        when.textContent = `redirects to ${shown(c.host)} · connected ${ago(c.created_ms)}${from} · last used ${ago(c.used_ms)}`;
        when.title = `Connected ${localTime(c.created_ms)}, last used ${localTime(c.used_ms)}`;
        who.append(name, ' ', unverified, when);
        const forget = document.createElement('button');
        forget.type = 'button';
        forget.setAttribute('part', 'forget');
        forget.dataset.id = c.id;
        forget.textContent = 'Forget';
        forget.setAttribute('aria-label', `Forget ${name.textContent} (${shown(c.host)})`);
        li.append(who, forget);
        if (c.id === this.#asking) {
          forget.hidden = true;
          const ask = document.createElement('p');
          ask.setAttribute('part', 'forget-ask');
          ask.setAttribute('role', 'alertdialog');
          const words = document.createElement('span');
          words.textContent = FORGET_ASK.replace('{name}', name.textContent);
          ask.setAttribute('aria-label', words.textContent);
          const yes = document.createElement('button');
          yes.type = 'button';
          yes.setAttribute('part', 'forget-yes');
          yes.dataset.id = c.id;
          yes.textContent = 'Forget';
          yes.setAttribute('aria-label', `Forget ${name.textContent} now`);
          const no = document.createElement('button');
          no.type = 'button';
          no.setAttribute('part', 'forget-no');
          no.dataset.id = c.id;
          no.textContent = 'Keep it';
          ask.append(words, yes, no);
          li.append(ask);
        }
        if (c.stopped) {
          // Stopped in a tab of this browser: its calls are refused until the person lets it go on.
          when.textContent += ' · stopped';
          const goOn = document.createElement('button');
          goOn.type = 'button';
          goOn.setAttribute('part', 'go-on');
          goOn.dataset.id = c.id;
          goOn.textContent = 'Let it go on';
          goOn.setAttribute('aria-label', `Let ${name.textContent} go on`);
          li.append(goOn);
        }
        return li;
      }),
    );
    const empty = this.#root.querySelector('[part=empty]');
    empty.hidden = this.#list.length > 0;
    empty.textContent = 'No agent app is connected to this tab.';
    if (focusedId != null) (this.#buttonOf(focusedPart, focusedId) || this.#root.querySelector('[part=refresh]')).focus();
    this.dispatchEvent(new Event('listed'));
  }
}

export class DataSwitchElement extends Base {
  #root;
  #dataSwitch = null;
  #dataset = null;
  /** Whether the dataset changed since the element first showed one: its state is then said. */
  #changed = false;
  #unsubscribe = null;
  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BASE_CSS}
      label { display: flex; gap: .5rem; align-items: flex-start; font-weight: 600; }
      input { margin-top: .3rem; width: 1.1rem; height: 1.1rem; }
      input:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
      p { margin: .5rem 0 0; font-size: .9rem; color: #5b5b60; }
      [part=notice] { padding: .5rem .6rem; border-left: 4px solid #0b5cad; background: #f2f7fd; color: #1d1d1f; }
      [part=notice] button { margin-top: .4rem; display: block; }
      [part=dataset-changed] { color: #1d1d1f; font-weight: 600; }
      [part=dataset-changed]:empty { display: none; }
    </style>
    <label part="switch-row"><input part="switch" type="checkbox" aria-describedby="now caveat"><span></span></label>
    <p part="dataset-changed" role="status" aria-live="polite"></p>
    <p part="now" id="now"></p>
    <div part="notice" role="note"><span part="notice-text"></span><button part="got-it" type="button">Got it</button></div>
    <p part="caveat" id="caveat"></p>`;
    this.#root.querySelector('label span').textContent = DATA_SENTENCES.SWITCH;
    this.#root.querySelector('[part=caveat]').textContent = DATA_SENTENCES.CAVEAT;
    this.#root.querySelector('[part=switch]').addEventListener('change', (event) => {
      if (this.#dataSwitch && this.#dataset != null) this.#dataSwitch.set(this.#dataset, event.target.checked);
    });
    this.#root.querySelector('[part=got-it]').addEventListener('click', () => {
      if (this.#dataSwitch && this.#dataset != null) this.#dataSwitch.seeNotice(this.#dataset);
      this.#root.querySelector('[part=switch]').focus();
    });
  }
  get dataSwitch() {
    return this.#dataSwitch;
  }
  set dataSwitch(value) {
    this.#unsubscribe?.();
    this.#dataSwitch = value;
    this.#unsubscribe = value ? value.subscribe(() => this.render()) : null;
    this.render();
  }
  get datasetId() {
    return this.#dataset;
  }
  set datasetId(value) {
    const next = value == null ? null : String(value);
    if (this.#dataset != null && next !== this.#dataset) this.#changed = true;
    this.#dataset = next;
    this.render();
  }
  render() {
    const on = Boolean(this.#dataSwitch && this.#dataset != null && this.#dataSwitch.isOn(this.#dataset));
    this.#root.querySelector('[part=switch]').checked = on;
    this.#root.querySelector('[part=switch]').disabled = !this.#dataSwitch || this.#dataset == null;
    const said = on ? DATA_SENTENCES.NOTICE_ON : DATA_SENTENCES.NOTICE;
    this.#root.querySelector('[part=now]').textContent = said;
    this.#root.querySelector('[part=notice-text]').textContent = said;
    const seen = !this.#dataSwitch || this.#dataset == null || this.#dataSwitch.noticeSeen(this.#dataset);
    this.#root.querySelector('[part=notice]').hidden = seen;
    this.#root.querySelector('[part=now]').hidden = !seen;
    // Another dataset shown: what the switch is for it now (written again on each change).
    const changed = this.#changed && this.#dataset != null ? (on ? DATA_SENTENCES.DATASET_ON : DATA_SENTENCES.DATASET_OFF).replace('{dataset}', shown(this.#dataset)) : '';
    const changedLine = this.#root.querySelector('[part=dataset-changed]');
    if (changedLine.textContent !== changed) changedLine.textContent = changed;
  }
}

if (globalThis.customElements) {
  for (const [name, cls] of [
    ['tabrelay-confirm-card', ConfirmCard],
    ['tabrelay-activity', ActivityLines],
    ['tabrelay-permissions', PermissionSettings],
    ['tabrelay-data-switch', DataSwitchElement],
    ['tabrelay-connections', ConnectionsList],
    ['tabrelay-grants', GrantsList],
  ]) {
    if (!customElements.get(name)) customElements.define(name, cls);
  }
}
