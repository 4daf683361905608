// A localStorage stand-in kept in memory, for the tests of the tab end without a browser (and
// the end-to-end harness's simulated browsers, which add their pairing keys to it).
export class MemoryStorage {
  constructor() {
    this.map = new Map();
  }
  getItem(k) {
    return this.map.has(k) ? this.map.get(k) : null;
  }
  setItem(k, v) {
    this.map.set(k, String(v));
  }
  removeItem(k) {
    this.map.delete(k);
  }
}
