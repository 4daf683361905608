// The record of what agents did, in the demo page in a real Chromium with WebMCP on: calls of a
// remote MCP client (the official SDK's: a read, a delete allowed on its card, one denied, a
// read the data switch refuses) and an in-browser agent's `executeTool` call of the destructive
// tool all land in the Agents panel's record; its JSON and CSV exports have one row per call,
// matching the calls made, with none of what the data switch hid; a tab opened later and a
// reloaded tab show the earlier record; Clear empties it in every tab, for good.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { APP_ORIGIN, dataOf } from './harness.mjs';
import { fileChromium, connectThroughPage, namedProvider, connected, cardSays, cardGone, choose, textOf } from './demo_harness.mjs';
import { RECORD_COLUMNS, DECISION_WORDS, SWITCH_OUTCOMES } from '../../tab/record.js';
import { CATALOGUE } from '../../tab/generated/bundle.js';

const chromium = fileChromium(['--enable-features=WebMCP']);
const AGENT = 'record-e2e';
const IN_BROWSER = 'an agent in this browser';
const SHOW_MS = 5_000;
const DEMO = `${APP_ORIGIN}/demo/?seed=11`;
/** A tool's title, as the record shows it (the export keeps its name). */
const titleOf = (name) => `“${CATALOGUE.tools.find((t) => t.name === name).title}”`;
let opened = [];
after(async () => {
  for (const p of opened) await p.close().catch(() => {});
});

/** The record's lines in `page`'s Agents panel, newest first. */
function recordLines(page) {
  return page.locator('#record [part~=entry]').allTextContents();
}

/** Waits until `page`'s record shows `n` lines. */
async function recordShows(page, n) {
  await page.waitForFunction(
    (count) => document.querySelector('#agents').shadowRoot.querySelector('#record').shadowRoot.querySelectorAll('[part~=entry]').length === count,
    n,
    { timeout: SHOW_MS },
  );
}

/** Presses an export button of `page`'s record; resolves with the file's text. */
async function exported(page, part) {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: SHOW_MS }), page.click(`#record [part=${part}]`)]);
  return readFile(await download.path(), 'utf8');
}

/** A CSV's rows (RFC 4180: quoted cells with doubled quotes, CRLF lines) as arrays. */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), (i += 1);
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += c;
  }
  return rows;
}

test('every agent’s calls land in the record; the exports’ rows match them; a later tab shows it; Clear empties it', async () => {
  // One browser context (one profile's storage) for both tabs.
  const context = await (await chromium()).newContext();
  opened.push(context);
  const page = await context.newPage();
  await page.goto(DEMO);
  await connected(page);
  const { client } = await connectThroughPage(page, AGENT, namedProvider(page, AGENT));
  assert.equal(await page.locator('#record [part=empty]').textContent(), 'No agent has used this tab yet.');

  // The calls, as the person and the agents make them.
  const values = await client.callTool({ name: 'items_values', arguments: { ids: [4] } });
  assert.equal(values.isError, false, textOf(values));
  const hidden = JSON.stringify(dataOf(values).items[0]);

  const allowed = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /asks to delete item 1/);
  await choose(page, 'once');
  assert.equal((await allowed).isError, false);
  await cardGone(page);

  const denied = client.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  await cardSays(page, /asks to delete item 2/);
  await choose(page, 'deny');
  assert.equal((await denied).isError, true);
  await cardGone(page);
  // Undo turn takes back the delete the person allowed: the record says it was undone.
  const undo = page.locator(`#activity [part=undo][aria-label^="Undo turn: ${AGENT}"]`);
  await undo.click({ timeout: SHOW_MS });
  await page.locator('#record [part~=undone]').waitFor({ timeout: SHOW_MS });

  await page.evaluate(() => {
    window.inBrowserCall = (async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'items_delete');
      return document.modelContext.executeTool(tool, { ids: [3] });
    })().then((text) => ({ text }), (e) => ({ error: `${e.name}: ${e.message}` }));
  });
  await cardSays(page, /an agent in this browser asks to delete item 3/);
  await choose(page, 'once');
  assert.ok((await page.evaluate(() => window.inBrowserCall)).text, 'the in-browser call ran');
  await cardGone(page);

  await page.locator('#data-switch [part=switch]').check();
  const switched = await client.callTool({ name: 'items_values', arguments: { ids: [5] } });
  assert.equal(switched.isError, true, 'the data switch refused it');
  const summary = await client.callTool({ name: 'groups_summary', arguments: { column: 'score' } });
  assert.equal(summary.isError, false);
  await page.locator('#data-switch [part=switch]').uncheck();

  const made = [
    { agent: AGENT, tool: 'items_values', decision: DECISION_WORDS.settings, outcome: 'done', undone: false },
    { agent: AGENT, tool: 'items_delete', decision: DECISION_WORDS.once, outcome: 'done', undone: true },
    { agent: AGENT, tool: 'items_delete', decision: DECISION_WORDS.deny, outcome: 'declined by the person', undone: false },
    { agent: IN_BROWSER, tool: 'items_delete', decision: DECISION_WORDS.once, outcome: 'done', undone: false },
    { agent: AGENT, tool: 'items_values', decision: DECISION_WORDS.dataSwitch, outcome: SWITCH_OUTCOMES.refused, undone: false },
    { agent: AGENT, tool: 'groups_summary', decision: DECISION_WORDS.settings, outcome: 'done', undone: false },
  ];

  // The panel's record lists them, newest first.
  await recordShows(page, made.length);
  const lines = await recordLines(page);
  [...made].reverse().forEach((call, i) => {
    assert.ok(lines[i].includes(call.agent) && lines[i].includes(titleOf(call.tool)) && lines[i].includes(call.decision) && lines[i].includes(call.outcome), `line ${i}: ${lines[i]}`);
    assert.equal(/ · undone$/.test(lines[i]), call.undone, `line ${i}: ${lines[i]}`);
  });
  assert.ok(lines.at(-1).includes(`) · ${titleOf('items_values')}`) && /^.*record-e2e \(.+\) · /.test(lines.at(-1)), 'a remote agent is named with where it connected from');
  assert.ok(lines[2].includes(`an agent in this browser (this browser) · ${titleOf('items_delete')}`), lines[2]);

  // Exports: one row per call made, in order, the same in JSON and CSV; none of the data.
  const json = JSON.parse(await exported(page, 'export-json'));
  assert.deepEqual(
    json.map(({ agent, tool, decision, outcome, undone }) => ({ agent, tool, decision, outcome, undone })),
    made,
  );
  const connection = json[0].connection;
  assert.ok(connection, 'a remote call names its connection');
  assert.deepEqual(json.map((r) => r.connection), [connection, connection, connection, 'in-browser', connection, connection]);
  for (const row of json) assert.ok(Math.abs(Date.parse(row.when) - Date.now()) < 120_000, row.when);
  assert.ok(json.every((row, i) => i === 0 || row.when >= json[i - 1].when), 'oldest first');
  const csvText = await exported(page, 'export-csv');
  const csv = parseCsv(csvText);
  assert.deepEqual(csv[0], [...RECORD_COLUMNS]);
  assert.deepEqual(
    csv.slice(1),
    // A cell a spreadsheet would read as a formula (an id may start with '-') is written with
    // an apostrophe first: the export's own guard.
    json.map((r) => RECORD_COLUMNS.map((c) => String(r[c]).replace(/^[=+\-@\t\r]/, "'$&"))),
  );
  const everything = JSON.stringify(json) + csvText;
  assert.ok(!everything.includes(hidden) && !/"score"|\bmin\b/.test(everything), 'no value read, nor what the switch hid, is in the record');

  // Filters: this agent only; refused or denied.
  await page.selectOption('#record [part=agent-filter]', IN_BROWSER);
  await recordShows(page, 1);
  await page.selectOption('#record [part=agent-filter]', '');
  await page.selectOption('#record [part=show]', 'refused');
  await recordShows(page, 2);
  await page.selectOption('#record [part=show]', 'undone');
  await recordShows(page, 1);
  await page.selectOption('#record [part=show]', 'all');

  // A tab opened later, and this tab reloaded, show the earlier record.
  const later = await context.newPage();
  await later.goto(DEMO);
  await recordShows(later, made.length);
  await page.reload();
  await connected(page);
  await recordShows(page, made.length);

  // Clear, in the tab opened later: asked once more, then empty in both tabs, and after a reload.
  await later.click('#record [part=clear]');
  await later.locator('#record [part=clear-ask]').waitFor({ state: 'visible', timeout: SHOW_MS });
  await later.click('#record [part=clear-no]');
  await recordShows(later, made.length);
  await later.click('#record [part=clear]');
  await later.click('#record [part=clear-yes]');
  await recordShows(later, 0);
  await recordShows(page, 0);
  await later.reload();
  await later.locator('#record [part=empty]', { hasText: 'No agent has used this tab yet.' }).waitFor({ timeout: SHOW_MS });
  await recordShows(later, 0);
  await client.close();
});
