// A model context as Chromium 156's `document.modelContext` behaves (probed; tab/webmcp.js says
// what was seen), for the unit tests of the tab end that run in Node without a browser: tools
// registered (a name taken twice, or a missing description, refused), withdrawn by aborting
// their signal (a `toolchange` each time), listed with the page's origin, and run by
// `executeTool`, which resolves with the tool's JSON.

/** The page's own tools as `document.modelContext` keeps them; tools name `origin` to pose as a frame's. */
export class FakeModelContext extends EventTarget {
  constructor(origin = 'http://127.0.0.1:8788') {
    super();
    this.origin = origin;
    this.registered = [];
  }
  async registerTool(tool, { signal } = {}) {
    if (this.registered.some((e) => e.tool.name === tool.name)) throw Object.assign(new Error('Duplicate tool name'), { name: 'InvalidStateError' });
    if (typeof tool.description !== 'string') throw new TypeError('Required member is undefined.');
    const entry = { tool, origin: tool.origin || this.origin };
    this.registered.push(entry);
    signal?.addEventListener('abort', () => {
      this.registered = this.registered.filter((e) => e !== entry);
      this.dispatchEvent(new Event('toolchange'));
    });
    this.dispatchEvent(new Event('toolchange'));
  }
  async getTools() {
    return this.registered.map(({ tool, origin }) => ({ name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: { ...tool.annotations }, origin, window: {} }));
  }
  async executeTool(registered, input) {
    const entry = this.registered.find((e) => e.tool.name === registered.name);
    if (!entry) throw new Error('not registered');
    const out = await entry.tool.execute(input, { signal: new AbortController().signal });
    return typeof out === 'string' ? out : JSON.stringify(out);
  }
  /** An in-browser agent's call: what an agent in the browser does. */
  async agentCalls(name, input) {
    return this.executeTool((await this.getTools()).find((t) => t.name === name), input);
  }
}
