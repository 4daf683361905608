// Model contexts as the browsers' `document.modelContext` behave, for the unit tests of the tab
// end that run in Node without a browser: tools registered (a name taken twice, or a missing
// description, refused), withdrawn by aborting their signal (a `toolchange` each time), listed
// with the page's origin, and run by `executeTool`, which resolves with the tool's JSON. Two
// shapes of what `getTools()` gives:
// - FakeModelContext, as Chromium 156's was probed (see tab/webmcp.js): plain dictionaries
//   ({name, title, description, inputSchema as the object given, whatever its type, annotations,
//   origin, window}); `outputSchema` is taken at registration and never listed.
// - ToolObjectModelContext, as Chrome 160's is described (Chrome's WebMCP updates page,
//   2026-11-26): `Tool` objects whose attributes are getters on the prototype (spread,
//   JSON.stringify and structuredClone copy nothing), `source` for `window`, the schemas as JSON
//   text and `null` when empty (annotations too), and `executeTool` runs only the very object
//   it gave (by its own id: a copy, or a tool withdrawn since, is refused).

class ModelContextBase extends EventTarget {
  constructor(origin = 'http://127.0.0.1:8788') {
    super();
    this.origin = origin;
    /** {tool: as given to registerTool, origin, id}, in registration order. */
    this.registered = [];
    this.nextId = 1;
  }
  async registerTool(tool, { signal } = {}) {
    if (this.registered.some((e) => e.tool.name === tool.name)) throw Object.assign(new Error('Duplicate tool name'), { name: 'InvalidStateError' });
    if (typeof tool.description !== 'string') throw new TypeError('Required member is undefined.');
    const entry = { tool, origin: tool.origin || this.origin, id: this.nextId++ };
    this.registered.push(entry);
    signal?.addEventListener('abort', () => {
      this.registered = this.registered.filter((e) => e !== entry);
      this.dispatchEvent(new Event('toolchange'));
    });
    this.dispatchEvent(new Event('toolchange'));
  }
  async run(entry, input) {
    if (input === null || typeof input !== 'object') throw new TypeError('The input is not an object.');
    const out = await entry.tool.execute(input, { signal: new AbortController().signal });
    return typeof out === 'string' ? out : JSON.stringify(out);
  }
  /** An in-browser agent's call: what an agent in the browser does. */
  async agentCalls(name, input) {
    return this.executeTool((await this.getTools()).find((t) => t.name === name), input);
  }
}

/** Chromium 156's `document.modelContext`: dictionaries; tools name `origin` to pose as a frame's. */
export class FakeModelContext extends ModelContextBase {
  async getTools() {
    return this.registered.map(({ tool, origin }) => {
      // As Chromium 156 lists them: `title` '' when none, `inputSchema` and `annotations` only when given.
      const listed = { name: tool.name, title: tool.title ?? '', description: tool.description, origin, window: {} };
      if (tool.inputSchema !== undefined) listed.inputSchema = tool.inputSchema;
      if (tool.annotations !== undefined) listed.annotations = { ...tool.annotations };
      return listed;
    });
  }
  async executeTool(registered, input) {
    const entry = this.registered.find((e) => e.tool.name === registered.name);
    if (!entry) throw new Error('not registered');
    return this.run(entry, input);
  }
}

/** Chrome 160's `Tool`: its attributes are the prototype's getters over private fields. */
export class Tool {
  #entry;
  #source;
  constructor(entry, source) {
    this.#entry = entry;
    this.#source = source;
  }
  get name() {
    return this.#entry.tool.name;
  }
  get title() {
    return this.#entry.tool.title ?? '';
  }
  get description() {
    return this.#entry.tool.description;
  }
  get inputSchema() {
    return this.#entry.tool.inputSchema == null ? null : JSON.stringify(this.#entry.tool.inputSchema);
  }
  get outputSchema() {
    return this.#entry.tool.outputSchema == null ? null : JSON.stringify(this.#entry.tool.outputSchema);
  }
  get annotations() {
    return this.#entry.tool.annotations == null ? null : { ...this.#entry.tool.annotations };
  }
  get origin() {
    return this.#entry.origin;
  }
  get source() {
    return this.#source;
  }
  /** The registration this object was made for (what executeTool runs it by). */
  static entryOf(tool) {
    return #entry in tool ? tool.#entry : null;
  }
}

/** Chrome 160's `document.modelContext`: `Tool` objects, run by the very object. */
export class ToolObjectModelContext extends ModelContextBase {
  constructor(origin) {
    super(origin);
    this.window = {};
  }
  async getTools() {
    return this.registered.map((entry) => new Tool(entry, this.window));
  }
  async executeTool(tool, input) {
    if (tool === null || typeof tool !== 'object' || !Tool.entryOf(tool)) throw new TypeError("Failed to execute 'executeTool' on 'ModelContext': parameter 1 is not of type 'Tool'.");
    const entry = Tool.entryOf(tool);
    if (!this.registered.includes(entry)) throw Object.assign(new Error('The tool is no longer registered.'), { name: 'NotFoundError' });
    return this.run(entry, input);
  }
}

/** Each shape, by the browser that gives it. */
export const SHAPES = Object.freeze({ 'Chromium 156 (dictionaries)': FakeModelContext, 'Chrome 160 (Tool objects)': ToolObjectModelContext });
