// The tab shows it is being driven: while an agent's call runs or waits for the person, the
// page's title and favicon say so (the app's own restored after), and a quiet banner,
// `<tabrelay-driven>` (fixed in the corner by default, so nothing on the page moves under the
// person's pointer when an agent starts), names the agent with Stop (the presence's Stop: the agent stops until the
// person lets it go on) and, while one waits for the person, "Show the question" (the focus to
// the confirm card, wherever it is on the page). Reads the presence (./presence.js) only; each
// part can be turned off, and the banner styled through its `part`s.
//
//   import { createDrivenIndicator } from './driven.js';
//   const driven = createDrivenIndicator({ presence });           // title, favicon and banner
//   createDrivenIndicator({ presence, favicon: false, banner: document.querySelector('tabrelay-driven') });
//   tabrelay-driven::part(banner) { background: … }  ::part(stop) { … }

/**
 * The title while agents drive the tab: `{agent}` (their names), the app's own `{title}`, and
 * the verb agreeing with how many they are (`{is}`: is or are, `{waits}`: waits or wait).
 */
export const DRIVEN_TITLES = Object.freeze({
  running: '▶ {agent} {is} using this tab · {title}',
  asking: '⏸ {agent} {waits} for you · {title}',
});
/** The banner's words. */
export const DRIVEN_WORDS = Object.freeze({
  running: 'Using this tab now: {agent}.',
  asking: 'Waiting for your answer: {agent}.',
  STOP: 'Stop',
  SHOW: 'Show the question',
});
/** The favicon while driven: a dot, blue while a call runs, amber while one waits for the person. */
export const DRIVEN_ICONS = Object.freeze({
  running: `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0b5cad"/><path d="M6 4.5v7l5.5-3.5z" fill="#fff"/></svg>')}`,
  asking: `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#b26a00"/><rect x="5" y="4.5" width="2" height="7" fill="#fff"/><rect x="9" y="4.5" width="2" height="7" fill="#fff"/></svg>')}`,
});

/**
 * Who drives the tab now, from the presence: {state: null | 'running' | 'asking', agents: [{agent,
 * key, asking}]}, one per activity line with a call under way or waiting (asking: one of its
 * calls waits for the person).
 */
export function drivenState(presence) {
  const asking = new Set(presence.questions().map((q) => q.lineKey));
  const agents = presence
    .lines()
    .filter((l) => l.waiting > 0 && !l.stopped)
    .map((l) => ({ agent: l.agent, key: l.key, asking: asking.has(l.key) }));
  const state = !agents.length ? null : agents.some((a) => a.asking) ? 'asking' : 'running';
  return { state, agents };
}

/** The agents' names in words: "Claude", "Claude and an agent in this browser". */
export function agentsWords(agents) {
  const names = [...new Set(agents.map((a) => a.agent))];
  return names.length <= 1 ? names[0] || 'An agent' : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** The title while driven: the app's `title` under the state's words. */
export function drivenTitle({ state, agents }, title) {
  if (!state) return title;
  const one = new Set(agents.map((a) => a.agent)).size <= 1;
  return DRIVEN_TITLES[state]
    .replace('{agent}', agentsWords(agents))
    .replace('{is}', one ? 'is' : 'are')
    .replace('{waits}', one ? 'waits' : 'wait')
    .replace('{title}', title);
}

/**
 * Shows in `document` when `presence`'s agents drive the tab. `title`, `favicon`, `banner`:
 * false turns each off (`banner` may be a `<tabrelay-driven>` the app placed; by default one
 * is added to the body while driven). `card`: the `<tabrelay-confirm-card>` its "Show the
 * question" brings into view and focuses; `returnFocus`: where the focus goes once the banner's
 * Stop went with its row (an element, e.g. the `<tabrelay-activity>`, or a function returning
 * one). Returns {state(), stop()} (stop: restores and stops following).
 */
export function createDrivenIndicator({ presence, document = globalThis.document, title = true, favicon = true, banner = true, card = null, returnFocus = null } = {}) {
  if (!presence) throw new Error('createDrivenIndicator needs the presence: it shows the calls under way.');
  let current = { state: null, agents: [] };
  /** The app's own title, and the one set here (a title the app sets meanwhile becomes its own). */
  let ownTitle = null;
  let setTitle = null;
  /** The icons' own addresses (link → href), and the link added when the page had none. */
  let ownIcons = null;
  let added = null;
  let placed = null;
  const bannerEl = banner && typeof banner === 'object' ? banner : null;

  const apply = () => {
    current = drivenState(presence);
    if (title) showTitle();
    if (favicon) showIcon();
    if (banner) showBanner();
  };

  function showTitle() {
    if (current.state) {
      if (ownTitle === null || document.title !== setTitle) ownTitle = document.title;
      setTitle = drivenTitle(current, ownTitle);
      document.title = setTitle;
    } else if (ownTitle !== null) {
      if (document.title === setTitle) document.title = ownTitle;
      ownTitle = setTitle = null;
    }
  }

  function showIcon() {
    if (current.state) {
      if (!ownIcons) {
        const links = [...document.querySelectorAll('link[rel~="icon"]')];
        ownIcons = new Map(links.map((l) => [l, l.getAttribute('href')]));
        if (!links.length) {
          added = document.createElement('link');
          added.setAttribute('rel', 'icon');
          document.head.append(added);
          ownIcons.set(added, null);
        }
      }
      for (const link of ownIcons.keys()) link.setAttribute('href', DRIVEN_ICONS[current.state]);
    } else if (ownIcons) {
      for (const [link, href] of ownIcons) if (link !== added) href == null ? link.removeAttribute('href') : link.setAttribute('href', href);
      added?.remove();
      ownIcons = added = null;
    }
  }

  function showBanner() {
    let el = bannerEl;
    if (!el && current.state && !placed && document.body) {
      placed = document.createElement('tabrelay-driven');
      document.body.prepend(placed);
    }
    el ||= placed;
    if (!el) return;
    el.presence = presence;
    el.card ??= card;
    el.returnFocus ??= returnFocus;
    el.show?.(current);
    if (!current.state && placed) {
      placed.remove();
      placed = null;
    }
  }

  apply();
  const unsubscribe = presence.subscribe(apply);
  return {
    state: () => current,
    stop() {
      unsubscribe();
      current = { state: null, agents: [] };
      if (title) showTitle();
      if (favicon) showIcon();
      if (banner) showBanner();
    },
  };
}

const BANNER_CSS = `
  :host { display: block; position: fixed; left: .75rem; bottom: .75rem; z-index: 10; max-width: calc(100vw - 1.5rem); }
  :host([hidden]) { display: none; }
  [part=banner] { display: flex; flex-direction: column; gap: .25rem; padding: .35rem .75rem; background: #eef4fb; color: #1d1d1f; border: 1px solid #c9d9ee; border-radius: .5rem; box-shadow: 0 1px 4px rgb(0 0 0 / .12); font-size: .9rem; }
  [part~=row] { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
  [part~=row][data-asking] [part=words] { color: #7a4a00; }
  [part=show] { border-color: #0b5cad; color: #0b5cad; }
  [part=show][hidden] { display: none; }
  button { font: inherit; font-size: .85rem; padding: .1rem .6rem; border-radius: .3rem; border: 1px solid #b3261e; background: #fff; color: #b3261e; cursor: pointer; }
  :focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
`;

const Base = globalThis.HTMLElement || class {};

/** Gives the focus to `target` (an element or a function returning one); returns whether it took it. */
function focusOn(target) {
  const el = typeof target === 'function' ? target() : target;
  if (!el?.isConnected || el.hidden || el.disabled) return false;
  el.focus?.();
  const active = el.getRootNode?.().activeElement;
  return active === el || Boolean(el.shadowRoot?.activeElement) || Boolean(el.contains?.(active));
}

/**
 * `<tabrelay-driven>`: the quiet banner, one row per agent driving the tab with its Stop, and
 * "Show the question" on a row whose agent waits for the person. Parts: `banner`, `row` (and
 * `row asking`), `words`, `show`, `stop`. Hidden while no agent drives.
 */
export class DrivenBanner extends Base {
  #root;
  presence = null;
  /** The confirm card "Show the question" brings into view and focuses. */
  card = null;
  /** Where the focus goes once a pressed Stop went with its row (an element or a function). */
  returnFocus = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${BANNER_CSS}</style><div part="banner" role="status" aria-label="Agents using this tab"></div>`;
  }

  connectedCallback() {
    if (!this.#root.querySelector('[part=banner]').children.length) this.hidden = true;
  }

  /** Shows `state` (drivenState's). */
  show({ state, agents }) {
    const box = this.#root.querySelector('[part=banner]');
    this.hidden = !state;
    const byKey = new Map(agents.map((a) => [a.key, a]));
    // Rows of agents still driving stay (a focused Stop keeps the focus); others go.
    for (const row of [...box.children]) if (!byKey.has(row.dataset.key)) row.remove();
    for (const a of agents) {
      let row = [...box.children].find((r) => r.dataset.key === a.key);
      if (!row) {
        row = document.createElement('div');
        row.dataset.key = a.key;
        const words = document.createElement('span');
        words.setAttribute('part', 'words');
        const stop = document.createElement('button');
        stop.type = 'button';
        stop.setAttribute('part', 'stop');
        stop.textContent = DRIVEN_WORDS.STOP;
        stop.addEventListener('click', () => {
          this.presence?.stop(row.dataset.key);
          // The row went with the press: the focus goes to the named control the app gave (the
          // activity lines, where the stopped agent's line says so), never to the page's body
          // or another agent's Stop.
          if (!stop.isConnected || this.hidden) focusOn(this.returnFocus);
        });
        const show = document.createElement('button');
        show.type = 'button';
        show.setAttribute('part', 'show');
        show.textContent = DRIVEN_WORDS.SHOW;
        show.addEventListener('click', () => this.card?.showQuestion?.());
        row.append(words, ' ', show, ' ', stop);
        box.append(row);
      }
      row.setAttribute('part', a.asking ? 'row asking' : 'row');
      row.toggleAttribute('data-asking', a.asking);
      row.querySelector('[part=words]').textContent = DRIVEN_WORDS[a.asking ? 'asking' : 'running'].replace('{agent}', a.agent);
      row.querySelector('[part=stop]').setAttribute('aria-label', `Stop ${a.agent}`);
      row.querySelector('[part=show]').hidden = !a.asking || !this.card;
    }
  }
}

if (globalThis.customElements && !customElements.get('tabrelay-driven')) customElements.define('tabrelay-driven', DrivenBanner);
