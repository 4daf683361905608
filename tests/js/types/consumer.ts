// An app's use of the tab end, as TypeScript sees it through the package's declarations: it
// must compile under `strict` (tests/js/package_types.test.mjs).
import { RelayClient, catalogueTools, takeConnectLink, CONSENT, type Call, type CallResult } from '../../../tab/relay-client.js';
import { createPresence, decide, readSettings, NotRun, MODES, type Question, type ActivityLine } from '../../../tab/presence.js';
import { ConfirmCard, askerOf, CARD_ARM_MS } from '../../../tab/presence-elements.js';
import { createDataSwitch, guardCall, DATA_SENTENCES } from '../../../tab/data-guard.js';
import { AgentsPanel, statusWords } from '../../../tab/agents-panel.js';
import { createToolBridge, IN_BROWSER_AGENT, type WebMcpTool } from '../../../tab/webmcp.js';
import { createRecord, toCsv, type RecordEntry } from '../../../tab/record.js';
import { createDrivenIndicator } from '../../../tab/driven.js';
import { createTabrelay, agentOf, SOME_AGENT, type Tabrelay } from '../../../tab/tabrelay.js';
import { joinLocal, LOCAL_ADDRESS } from '../../../tab/local-relay.js';

const presence = createPresence({
  app: 'orders',
  tools: [{ name: 'orders_delete', title: 'Delete orders', safety: 'destructive' }],
  confirmKinds: { orders_delete: ['deletes-saved'] },
  estimate: () => null,
  undoTurn: (steps: unknown[]) => steps.length,
});
const dataSwitch = createDataSwitch({ app: 'orders' });
const switchElement = document.querySelector('tabrelay-data-switch');
if (switchElement) {
  switchElement.dataSwitch = dataSwitch;
  switchElement.datasetId = 'orders-2026';
}
const relay = new RelayClient({
  relay: 'https://relay.example',
  handle: (call: Call): Promise<CallResult> =>
    guardCall({ tool: { name: call.tool, data: 'summaries', summaries_only: { result: ['ok'], errors: 'as_said' } }, dataset: 'orders-2026', dataSwitch }, () => presence.run(call, async () => ({ data: { ok: true } }))),
  onCancel: (id: number) => presence.cancel(id),
  tools: catalogueTools({ orders_delete: presence.settingOf('orders_delete') }),
});
presence.onAsking = (q: Question) => relay.asking(Number(q.call.id), q.sentence);
presence.onAnswered = (q: Question) => relay.answered(Number(q.call.id));
presence.store.subscribe(() => relay.setTools(catalogueTools()));
relay.start();
const panel: AgentsPanel | null = document.querySelector('tabrelay-agents');
if (panel) Object.assign(panel, { relay, presence, dataSwitch, datasetId: 'orders-2026' });
const unsubscribe: () => void = relay.subscribe((r) => statusWords(r.status, r.statusDetail));
// The local server beside the relay (tabrelay-tab/local), quiet while none runs.
const local = new RelayClient({ relay: LOCAL_ADDRESS, quiet: true, handle: () => ({ data: null }) });
const joined: RelayClient = joinLocal(relay, local);
const absent: boolean = joined.local?.status === 'absent';
void absent;
unsubscribe();

const card: ConfirmCard | null = document.querySelector('tabrelay-confirm-card');
if (card) card.presence = presence;
const lines: ActivityLine[] = presence.lines();
const code: string | null = takeConnectLink();
const tail: number = CONSENT.NOT_THIS_BROWSER.length + CARD_ARM_MS;
const title: string = MODES['read-only'].title;
const decided = decide({ kinds: ['change'], settings: readSettings(null) }).decision;
const refused = new NotRun('no', 'declined').outcome;
const who: string = askerOf({ agent: 'Claude', connection: { id: 'c', host: 'claude.ai' } });
const caveat: string = DATA_SENTENCES.CAVEAT;
const bridge = createToolBridge({ relay, presence });
const tool: WebMcpTool = { name: 'orders_count', description: 'Counts the orders.', annotations: { readOnlyHint: true }, execute: (_input, client) => ({ n: client.agent === IN_BROWSER_AGENT ? 1 : 2 }) };
void bridge.registerTool(tool, { signal: new AbortController().signal });
export { lines, code, tail, title, decided, refused, who, caveat };

// The record of what agents did, and the sign that the tab is being driven.
const record = createRecord({ app: 'orders' });
record.follow(presence);
const door = record.door((call: Call, fn: (signal: AbortSignal) => Promise<CallResult>) => presence.run(call, fn));
void door;
const rows: RecordEntry[] = record.entries();
const csv: string = toCsv(rows);
if (panel) panel.record = record;
const driven = createDrivenIndicator({ presence, favicon: false });
const stopDriven: () => void = driven.stop;
void csv, stopDriven;

// The one call that wires it all (tabrelay-tab/wire).
const wired: Tabrelay = createTabrelay({
  relay: 'https://relay.example',
  local: 'http://127.0.0.1:8790',
  app: 'orders',
  tools: [{ name: 'orders_list', title: 'List orders', description: 'Lists the orders.', safety: 'read', input: { type: 'object' }, data: 'summaries', summaries_only: { result: ['count'], errors: 'as_said' } }, tool],
  run: (name, input, client) => ({ name, input, agent: client.agent }),
  dataset: 'orders-2026',
  confirmKinds: { orders_delete: ['deletes-saved'] },
  driven: { favicon: false },
});
const stopHearing: () => void = wired.on('call', (e) => console.log(e.agent, e.tool, e.outcome, e.ok));
wired.on('items', (items) => items.length);
wired.on('status', (r) => r.status);
wired.setDataset('orders-2027');
wired.withdraw('orders_list');
const someone: string = agentOf({ agent: '' }) + SOME_AGENT;
void stopHearing, someone, wired.presence.lines(), wired.relay?.status;

// The chat bar (tabrelay-tab/chat, tabrelay-tab/chat-element), alone and wired by the one call.
import { createChat, type Chat } from '../../../tab/chat.js';
import { ChatElement, toolLineWords } from '../../../tab/chat-element.js';
const alone: Chat = createChat({ app: 'orders', presence, handle: (call) => presence.run(call, async () => ({ data: { ok: true } })), origins: { anthropic: 'https://proxy.example' } });
alone.setKey('anthropic', 'sk-…', { remember: false });
alone.subscribe((e) => (e.type === 'call' ? toolLineWords(e.line) : e.type));
const chatBar: ChatElement | null = document.querySelector('tabrelay-chat');
if (chatBar) chatBar.chat = alone;
const withChat = createTabrelay({ relay: 'https://relay.example', app: 'orders', chat: { origins: { openai: 'https://proxy.example' } } });
void withChat.chat?.then((c: Chat) => c.send('Count the orders'));
