// Declarations of `<tabrelay-chat>` (./chat-element.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs.

import type { Chat, ChatToolLine } from './chat.js';

export const LINE_WORDS: Readonly<{ queued: string; asking: string; running: string }>;
export const KEY_WORDS: Readonly<{ tab: string; browser: string; none: string }>;
export function tookWords(ms: number | null): string;
export function toolLineWords(line: ChatToolLine): string;

/** `<tabrelay-chat>`: draws a chat of ./chat.js (set `chat`). */
export class ChatElement extends HTMLElement {
  chat: Chat | null;
}

declare global {
  interface HTMLElementTagNameMap {
    'tabrelay-chat': ChatElement;
  }
}
