// Declarations of the tab end's WebMCP bridge (./webmcp.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs.
import type { Presence, PresenceCall } from './presence.js';
import type { RelayClient, Call, CallResult, TabTool } from './relay-client.js';

export const IN_BROWSER_AGENT: string;
export const IN_BROWSER_CONNECTION: Readonly<{ id: string; kind: 'browser'; client: string; host: string }>;
export const CONSEQUENTIAL: string;
export const UNTRUSTED_NOTE: string;
export const TURN_IDLE_MS: number;

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

/** A tool in WebMCP's shape. */
export interface WebMcpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema?: Record<string, unknown>;
  annotations?: WebMcpAnnotations;
  execute(input: Record<string, unknown>, client: ToolClient): unknown;
}

/** The browser's `document.modelContext`, as far as the bridge uses it. */
export interface ModelContextLike extends Pick<EventTarget, 'addEventListener' | 'removeEventListener'> {
  registerTool(tool: Omit<WebMcpTool, 'execute'> & { execute(input: Record<string, unknown>, client?: { signal?: AbortSignal }): unknown }, options?: { signal?: AbortSignal }): Promise<void> | void;
  getTools(): Promise<Array<{ name: string; title?: string; description?: string; inputSchema?: Record<string, unknown>; annotations?: WebMcpAnnotations; origin?: string }>>;
  executeTool(tool: unknown, input: Record<string, unknown>): Promise<unknown>;
}

export function safetyOf(annotations: WebMcpAnnotations | null | undefined): 'read' | 'change';
export function kindsOfAnnotations(annotations: WebMcpAnnotations | null | undefined): string[];
export function mcpDefinition(tool: Pick<WebMcpTool, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'>): Omit<TabTool, 'setting'>;
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
  frames?: string[];
  origin?: string;
  now?(): number;
}
export function createToolBridge(options: ToolBridgeOptions): ToolBridge;
