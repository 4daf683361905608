// Declarations of the tab end's WebMCP bridge (./webmcp.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs.
import type { Presence, PresenceCall } from './presence.js';
import type { RelayClient, Call, CallResult, TabTool } from './relay-client.js';

export const IN_BROWSER_AGENT: string;
export const IN_BROWSER_CONNECTION: Readonly<{ id: string; kind: 'browser'; client: string; host: string }>;
export const CONSEQUENTIAL: string;
export const UNTRUSTED_NOTE: string;
export const TURN_IDLE_MS: number;
export const NO_FRAMES: string;

/** WebMCP's tool annotations. */
export interface WebMcpAnnotations {
  readOnlyHint?: boolean;
  consequentialHint?: boolean;
  untrustedContentHint?: boolean;
  [key: string]: unknown;
}

/** What a tool's `execute` gets beside its input. */
export interface ToolClient {
  /** Aborts on Stop, on the agent's cancel, or the browser's. */
  signal: AbortSignal;
  /** Who calls: the connection's agent, or IN_BROWSER_AGENT. */
  agent: string;
  call: PresenceCall;
}

/** A JSON Schema of an object, or its JSON text; null or absent when empty. */
export type WebMcpSchema = Record<string, unknown> | string | null;

/** A tool in WebMCP's shape. */
export interface WebMcpTool {
  name: string;
  title?: string;
  description: string;
  /** Its input's JSON Schema ("type": "object"); absent: any object. */
  inputSchema?: WebMcpSchema;
  /** Its result's JSON Schema ("type": "object"), given to the browser (Chrome 159 on); not stated to remote agents while the relay sends no structuredContent. */
  outputSchema?: WebMcpSchema;
  annotations?: WebMcpAnnotations;
  execute(input: Record<string, unknown>, client: ToolClient): unknown;
}

/**
 * A tool as the browser's `getTools()` gives it: a dictionary up to Chrome 159, a `Tool` object
 * from Chrome 160 (attributes on its prototype; `source` for `window`; empty schemas null,
 * `inputSchema` may be JSON text). Each attribute is read by name.
 */
export interface RegisteredTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: WebMcpSchema;
  readonly outputSchema?: WebMcpSchema;
  readonly annotations?: WebMcpAnnotations | null;
  readonly origin?: string;
  readonly source?: unknown;
  readonly window?: unknown;
}

/** A tool from `getTools()` as the bridge reads it (`readTool`). */
export interface ReadTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations: WebMcpAnnotations;
  origin: string | undefined;
  /** The Window that registered it (Chrome 160's `source`, earlier `window`), or null. */
  source: unknown;
}

/** The browser's `document.modelContext`, as far as the bridge uses it. */
export interface ModelContextLike extends Pick<EventTarget, 'addEventListener' | 'removeEventListener'> {
  registerTool(tool: Omit<WebMcpTool, 'execute'> & { execute(input: Record<string, unknown>, client?: { signal?: AbortSignal }): unknown }, options?: { signal?: AbortSignal }): Promise<void> | void;
  getTools(): Promise<RegisteredTool[]>;
  /** Runs the very object `getTools()` gave (Chrome 160 runs it by its own id). */
  executeTool(tool: RegisteredTool, input: Record<string, unknown>): Promise<unknown>;
}

export function safetyOf(annotations: WebMcpAnnotations | null | undefined): 'read' | 'change';
export function kindsOfAnnotations(annotations: WebMcpAnnotations | null | undefined): string[];
export function mcpDefinition(tool: Pick<WebMcpTool, 'name' | 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>): Omit<TabTool, 'setting'>;
export function objectSchema<E>(value: unknown, empty: E): Record<string, unknown> | E | undefined;
export function hintsOf(annotations: unknown): WebMcpAnnotations;
export function readTool(tool: unknown): ReadTool | null;
export function markUntrusted(data: unknown): { untrusted_content: unknown; note: string };
export function relayResult(out: unknown): CallResult;
export function parsedResult(text: unknown): unknown;

export interface BridgedTool {
  name: string;
  definition: Omit<TabTool, 'setting'>;
  annotations: WebMcpAnnotations;
  /** Whether the page registered it with WebMCP itself (relayed, not registered here). */
  page: boolean;
}

export interface ToolBridge {
  readonly webmcp: boolean;
  tools(): BridgedTool[];
  stated(): TabTool[];
  subscribe(fn: (bridge: ToolBridge) => void): () => void;
  registerTool(tool: WebMcpTool, options?: { signal?: AbortSignal }): Promise<void>;
  handle(call: Call): Promise<CallResult>;
  start(): Promise<void>;
  stop(): void;
  step(): void;
}

export interface ToolBridgeOptions {
  relay?: Pick<RelayClient, 'setTools' | 'step'> | null;
  presence: Presence;
  run?(call: PresenceCall, fn: (signal: AbortSignal) => Promise<CallResult>): Promise<CallResult>;
  modelContext?: ModelContextLike | null;
  /** This page's origin: the page's own tools of it alone are relayed. */
  origin?: string;
  now?(): number;
}
export function createToolBridge(options: ToolBridgeOptions): ToolBridge;
