// Declarations of the presence check (./presence-check.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs.
import type { PresenceAssertion, PresenceKey } from './relay-client.js';

/** The decisions a presence check is made for. */
export const PRESENCE: Readonly<{ CREATE: string; APPROVE: string; ANSWER: string; SETTING: string }>;
/** What the person reads while their device is asked, when it did not confirm, or cannot. */
export const PRESENCE_SENTENCES: Readonly<{ ASKING: string; NOT_CONFIRMED: string; NO_DEVICE: string; WITHOUT_DEVICE: string }>;
/** How long the device's prompt may wait, in milliseconds. */
export const PRESENCE_WAIT_MS: number;
export function base64url(bytes: ArrayBuffer | ArrayBufferView): string;
export function fromBase64url(text: string): Uint8Array;
/** An ASN.1 DER ECDSA signature as r then s (64 bytes), or null. */
export function rawSignature(der: ArrayBuffer | Uint8Array): Uint8Array | null;

/** What the check needs of the relay client. */
export interface PresenceRelay {
  readonly origin: string;
  readonly pairing: string | null;
  presenceKey: PresenceKey | null;
  enrolPresence(made: { credential: string; key: string; client_data: string; authenticator: string }): Promise<PresenceKey>;
}

export interface PresenceCheckOptions {
  relay: PresenceRelay;
  /** Where the browser has no platform authenticator: refuse those decisions (default), or allow them with a warning. */
  withoutDevice?: 'refuse' | 'allow';
  credentials?: Pick<CredentialsContainer, 'create' | 'get'>;
  PublicKeyCredential?: { isUserVerifyingPlatformAuthenticatorAvailable(): Promise<boolean> };
  subtle?: SubtleCrypto;
  /** The relying party's name the device shows. */
  name?: string;
  waitMs?: number;
}

export interface PresenceCheck {
  readonly withoutDevice: 'refuse' | 'allow';
  available(): Promise<boolean>;
  /** The assertion to send with an approval of `said`, or null where the app allows going on without a device; rejects with a sentence. */
  approval(said: string): Promise<PresenceAssertion | null>;
  /** Resolves once the person's device confirmed `decision` about `subject` ({verified: false} without a device, where allowed); rejects with a sentence. */
  confirm(decision: string, subject: string): Promise<{ verified: boolean }>;
  state(): Promise<'device' | 'without' | 'refused'>;
}
export function createPresenceCheck(options: PresenceCheckOptions): PresenceCheck;
