// Declarations of the chat bar's engine (./chat.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs. Its conversation (./chat-conversation.js) and providers
// (./chat-provider.js, ./chat-anthropic.js, ./chat-openai.js) are declared here as it hands them out.

import type { Presence, PresenceCall } from './presence.js';
import type { CallResult } from './relay-client.js';

export const CHAT_MODEL_INSTRUCTIONS: string;
export const ASK_PERSON: Readonly<{ name: 'ask_person'; description: string; inputSchema: Readonly<Record<string, unknown>> }>;
export const CHAT_SAID: Readonly<Record<'noKey' | 'noModel' | 'stopped' | 'askBad' | 'asked' | 'refusal' | 'length' | 'tooManySteps' | 'picture' | 'held', string>>;
/** How far the provider's count of the last call may scale the estimate of the next. */
export const ESTIMATE_SCALE: Readonly<{ least: number; most: number }>;
export const MAX_MODEL_CALLS: number;
export const KEY_PREFIX: string;
export const SETTINGS_PREFIX: string;

/** Why a model stopped. */
export type Stop = 'end' | 'tool' | 'length' | 'refusal' | 'stopped' | 'other';
export interface Usage { input: number; output: number }
/** A model's part; `reasoning`: a provider's own reasoning item (OpenAI's, encrypted), sent back to that provider only. */
export type ModelPart = { type: 'text'; text: string } | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> } | { type: 'reasoning'; provider: string; item: Record<string, unknown> };
export type MessagePart = ModelPart | { type: 'tool_result'; id: string; name: string; content: string; isError: boolean };
export interface NeutralMessage { role: 'user' | 'assistant'; parts: MessagePart[] }
/** An entry of the conversation (frozen once added). */
export type ChatEntry = { seq: number; at: number; turn: number } & (
  | { kind: 'person'; text: string }
  | { kind: 'model'; provider: string; model: string; parts: ModelPart[]; stop: Stop; usage: Usage }
  | { kind: 'tool'; callId: string; name: string; content: string; isError: boolean; ms: number | null }
  | { kind: 'note'; note: 'stopped' | 'error' | 'refusal' | 'limit' | 'summary' | 'tried'; text: string; usage?: Usage; covers?: number }
);
export interface Conversation {
  readonly id: string;
  readonly budget: number;
  entries(): ChatEntry[];
  subscribe(fn: (entry: ChatEntry) => void): () => void;
  messages(): NeutralMessage[];
  spent(): number;
  setBudget(tokens: number): void;
  budgetRefusal(next?: number): string | null;
  toMarkdown(title?: string): string;
}

export interface ModelInfo { id: string; name: string; window: number }
export type StreamEvent = { type: 'text'; text: string } | { type: 'reasoning'; item: Record<string, unknown> } | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> } | { type: 'usage'; usage: Usage } | { type: 'done'; stop: Stop; usage: Usage };
/** A model provider (Anthropic's Messages API, OpenAI's Responses API, or the app's own). */
export interface ChatProvider {
  readonly id: string;
  readonly name: string;
  readonly origin: string;
  models(options: { key: string; signal?: AbortSignal }): Promise<ModelInfo[]>;
  stream(request: { key: string; model: string; instructions?: string; messages: NeutralMessage[]; tools?: Array<{ name: string; description?: string; inputSchema?: unknown }>; maxTokens?: number; signal?: AbortSignal }): AsyncIterable<StreamEvent>;
}
type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
export function defaultProviders(origins?: Partial<Record<'anthropic' | 'openai', string>>, fetch?: FetchLike): Record<'anthropic' | 'openai', ChatProvider>;
export function argumentsInWords(input: Record<string, unknown> | null | undefined, chars?: number): string;
export function resultText(result: Partial<CallResult> | null | undefined): string;

/** A tool call's line in the chat. */
export interface ChatToolLine { callId: string; tool: string; words: string; state: 'queued' | 'asking' | 'running' | 'ended'; outcome: string | null; ms: number | null; turn: number }
export type ChatEvent =
  | { type: 'change' }
  | { type: 'turn' | 'ended'; turn: number }
  | { type: 'text'; text: string; turn: number }
  | { type: 'restart'; turn: number }
  | { type: 'waiting'; waiting: string | null; ms: number }
  | { type: 'call'; line: ChatToolLine }
  | { type: 'asking'; asking: { question: string; choices: readonly string[] } }
  /** A message refused while the chat is stopped: the person's device did not confirm it was them. */
  | { type: 'held'; sentence: string };
type StorageLike = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface ChatOptions {
  /** The app's name: keys and the chat's choices are kept under it. */
  app: string;
  presence?: Presence | null;
  /** The door every agent's call goes through (createTabrelay gives the bridge's). */
  handle(call: PresenceCall): Promise<CallResult>;
  tools?: () => Array<{ name: string; definition?: { name: string; title?: string; description?: string; inputSchema?: unknown } }>;
  subscribeTools?: ((fn: () => void) => unknown) | null;
  providers?: Record<string, ChatProvider>;
  /** Each provider's API origin (tests, a company's proxy). */
  origins?: Partial<Record<'anthropic' | 'openai', string>>;
  fetch?: FetchLike;
  budget?: number;
  dataKeptOut?: () => boolean;
  session?: StorageLike | null;
  local?: StorageLike | null;
  id?: string;
  instructions?: string;
  now?: () => number;
}

export interface Chat {
  readonly id: string;
  readonly connection: Readonly<{ id: string; kind: 'chat'; client: string; host: string }>;
  readonly conversation: Conversation;
  readonly provider: string;
  readonly model: string | null;
  readonly turn: number;
  readonly busy: boolean;
  /** Whether the chat's agent is stopped: the next message goes only once the person's device confirms it. */
  readonly stopped: boolean;
  providers(): Array<{ id: string; name: string; origin: string }>;
  tools(): Array<{ name: string; title: string }>;
  models(): ModelInfo[];
  modelsSaid(): string;
  live(): { turn: number; text: string; waiting: string | null } | null;
  asking(): { question: string; choices: readonly string[] } | null;
  footer(turn: number): string | null;
  toolLine(callId: string): ChatToolLine | null;
  subscribe(fn: (event: ChatEvent) => void): () => void;
  chooseProvider(id: string): Promise<ModelInfo[]> | undefined;
  chooseModel(id: string | null): void;
  setBudget(tokens: number): void;
  keyKept(provider?: string): 'tab' | 'browser' | null;
  setKey(provider: string, key: string, options?: { remember?: boolean }): boolean;
  forgetKey(provider?: string): void;
  listModels(): Promise<ModelInfo[]>;
  send(text: string): Promise<boolean>;
  choose(choice: string): Promise<boolean> | false;
  stop(): void;
  stoppedByLine(line: { turn: number | null }): void;
  toMarkdown(title?: string): string;
}

/** The chat: the person's own agent in the tab, whose calls go through the same door as every agent's. */
export function createChat(options: ChatOptions): Chat;
