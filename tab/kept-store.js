// What the presence and the data switch keep in the browser, in one place: a value kept as JSON
// under one localStorage key, read through the owner's `read` (which makes any text, or
// nothing, a valid value), heard by subscribers, and followed across the browser's tabs.
// Internal to the package (./presence.js and ./data-guard.js); storage that is off or refuses
// keeps the value for the page.

/**
 * A value kept under `key` in `storage`: `get()`, `set(value)` (kept, then every subscriber
 * called), `subscribe(fn)` (returns a function that stops it) and `follow(target)` (another
 * tab's change, seen through `storage` events on `target`; returns a function that stops).
 */
export function createKeptStore({ key, storage, read }) {
  const listeners = new Set();
  const load = () => {
    try {
      return read(storage?.getItem(key) ?? null);
    } catch {
      return read(null);
    }
  };
  let current = load();
  const changed = () => {
    for (const fn of listeners) fn(current);
  };
  return {
    key,
    get: () => current,
    set(value) {
      current = read(value);
      try {
        storage?.setItem(key, JSON.stringify(current));
      } catch {
        // Storage is off: kept for the page.
      }
      changed();
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    follow(target) {
      const onStorage = (event) => {
        if (event.key !== key) return;
        current = load();
        changed();
      };
      target.addEventListener('storage', onStorage);
      return () => target.removeEventListener('storage', onStorage);
    },
  };
}
