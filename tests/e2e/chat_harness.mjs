// What the chat bar's end-to-end tests share: the demo page opened with its chat's providers
// pointed at played APIs (tests/played/providers.mjs, on loopback; the page's configuration is
// served naming them, as whoever serves the page would), the person's key typed and saved, and
// the chat's parts as the person meets them.
import { after } from 'node:test';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { openDemo, SHOW_MS } from './demo_harness.mjs';

export { PLAYED_KEY };

/**
 * The file's played providers, started when first asked for and closed once the file's tests are
 * done: `const played = filePlayed();` then `const { anthropic, openai } = await played();`.
 */
export function filePlayed() {
  let started = null;
  after(async () => {
    const p = await started?.catch(() => null);
    await Promise.all(Object.values(p ?? {}).map((x) => x.close()));
  });
  return () => (started ||= Promise.all([playProvider('anthropic'), playProvider('openai')]).then(([anthropic, openai]) => ({ anthropic, openai })));
}

/** Serves the demo's configuration naming the played providers' origins (as serve-tab would name a relay). */
export async function routeChatOrigins(context, played) {
  const origins = { anthropic: played.anthropic.origin, openai: played.openai.origin };
  await context.route('**/demo/config.js', async (route) => {
    const response = await route.fetch();
    const text = (await response.text()).replace(/export const CHAT_ORIGINS = .*;\n?/, '');
    await route.fulfill({ response, body: `${text}\nexport const CHAT_ORIGINS = ${JSON.stringify(origins)};\n`, headers: { ...response.headers(), 'content-type': 'text/javascript' } });
  });
}

/**
 * A demo page of a fresh context of `browser` whose chat talks to the played providers, with
 * `key` typed into the chat's settings and saved (`remember`: the Remember box ticked), once the
 * models are listed (or the key's refusal is said). `watch(context)`: called before the page opens.
 */
export async function openChatDemo(browser, played, { key = PLAYED_KEY, remember = false, provider = 'anthropic', watch = null, query = '' } = {}) {
  const context = await browser.newContext();
  await watch?.(context);
  await routeChatOrigins(context, played);
  const page = await openDemo(context, '', query);
  await page.locator('#chat [part=settings] summary').click();
  if (provider !== 'anthropic') await page.locator('#chat [part=provider]').selectOption(provider);
  if (key) {
    await page.locator('#chat [part=key]').fill(key);
    if (remember) await page.locator('#chat [part=remember]').check();
    await page.locator('#chat [part=save-key]').click();
    await page.waitForFunction(() => {
      const root = document.querySelector('#chat').shadowRoot;
      return root.querySelector('[part=model]').options.length > 0 || root.querySelector('[part=models-said]').textContent;
    }, null, { timeout: SHOW_MS });
  }
  return { page, context };
}

/** The person types `text` into the chat and presses Enter. */
export async function say(page, text) {
  await page.locator('#chat [part=message]').fill(text);
  await page.locator('#chat [part=message]').press('Enter');
}

/** Waits until the chat's conversation shows `pattern` (in an entry of `part`). */
export function chatShows(page, pattern, part = 'model', timeout = SHOW_MS) {
  return page.locator(`#chat [part=log] [part~=${part}]`, { hasText: pattern }).first().waitFor({ timeout });
}

/** Waits until the chat's turn ended (its footer shows). */
export function turnEnded(page, turn) {
  return page.locator(`#chat [part~=footer][data-turn="${turn}"]`).waitFor({ timeout: SHOW_MS * 2 });
}
