// A scripted tab for the conformance suite's `server` mode: it states the suite's fixture
// tools as its own tool list (the relay lists the focused tab's tools) and answers them as
// the suite's reference server does, through the real relay client. Test-only: the product's
// tools are the app's (tab/demo); these exist so the suite's scenarios reach a tab.

import { openTab } from './harness.mjs';

/** A 1×1 red PNG and a tiny silent WAV, base64. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA==';
const image = { data: PNG, mimeType: 'image/png', width: 1, height: 1 };

const elicit = (message, properties, required) => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties, required } },
});
const sample = (text, maxTokens) => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
});
const roots = { method: 'roots/list', params: {} };
const userName = elicit('What is your name?', { name: { type: 'string' } }, ['name']);

/** What each fixture does with a call: returns the relay client's answer shape. */
function fixtures(tab) {
  let changes = 0;
  const responses = (call) => call.input?.responses ?? null;
  const has = (call, ...keys) => keys.every((k) => responses(call) && k in responses(call));
  return {
    test_simple_text: () => ({ data: 'This is a simple text response for testing.' }),
    test_image_content: () => ({ data: 'A 1×1 red pixel.', image }),
    test_audio_content: () => ({ data: 'A short silence.', audio: { data: WAV, mimeType: 'audio/wav' } }),
    test_embedded_resource: () => ({
      data: 'An embedded resource.',
      resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
    }),
    test_multiple_content_types: () => ({
      data: 'Multiple content types test:',
      image,
      resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
    }),
    test_error_handling: () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
    // The relay's progress is what the tab reports while it works: here two steps, then done.
    test_tool_with_progress: async (call) => {
      for (const step of ['Step 1 of 2.', 'Step 2 of 2.']) {
        tab.client.asking(call.id, step);
        await new Promise((r) => setTimeout(r, 50));
      }
      tab.client.answered(call.id);
      return { data: 'Progress test finished.' };
    },
    // Its region rides in an Mcp-Param-Region header too (x-mcp-header); the relay holds the
    // two together before the tab hears of the call.
    test_custom_headers: (call) => ({ data: `Region ${call.args?.region}.` }),
    // What a tab says while it works goes to a session-era client as log messages (and to
    // none in 2026-07-28, where the relay reads no per-request level): three steps.
    test_tool_with_logging: (call) => saysThreeSteps(tab, call),
    test_logging_tool: (call) => saysThreeSteps(tab, call),
    test_missing_capability: (call) =>
      has(call, 'answer') ? { data: 'Sampled.' } : { inputRequired: { answer: sample('Say hello', 10) } },
    test_streaming_elicitation: (call) =>
      has(call, 'user_name') ? { data: 'Thanks.' } : { inputRequired: { user_name: userName } },
    test_trigger_tool_change: () => {
      changes += 1;
      tab.client.setTools(definitions(changes));
      return { data: 'The tool list changed.' };
    },
    test_input_required_result_elicitation: (call) => {
      const name = responses(call)?.user_name?.content?.name;
      return name ? { data: `Hello, ${name}!` } : { inputRequired: { user_name: userName } };
    },
    test_input_required_result_sampling: (call) => {
      const r = responses(call)?.capital_question;
      return r ? { data: `The model said: ${r.content?.text ?? ''}` } : { inputRequired: { capital_question: sample('What is the capital of France?', 100) } };
    },
    test_input_required_result_list_roots: (call) => {
      const r = responses(call)?.client_roots;
      return r ? { data: `Roots: ${(r.roots ?? []).map((x) => x.uri).join(', ')}` } : { inputRequired: { client_roots: roots } };
    },
    test_input_required_result_request_state: (call) =>
      has(call, 'confirm') && call.input?.state?.round === 1
        ? { data: 'state-ok: confirmed.' }
        : { inputRequired: { confirm: elicit('Please confirm', { ok: { type: 'boolean' } }, ['ok']) }, state: { round: 1 } },
    test_input_required_result_multiple_inputs: (call) =>
      has(call, 'user_name', 'greeting', 'client_roots')
        ? { data: 'All three answers arrived.' }
        : { inputRequired: { user_name: userName, greeting: sample('Generate a greeting', 50), client_roots: roots }, state: { round: 1 } },
    test_input_required_result_multi_round: (call) => {
      const round = call.input?.state?.round ?? 0;
      if (round === 1 && has(call, 'step1')) {
        return { inputRequired: { step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }, ['color']) }, state: { round: 2 } };
      }
      if (round === 2 && has(call, 'step2')) return { data: 'Both steps answered.' };
      return { inputRequired: { step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }, ['name']) }, state: { round: 1 } };
    },
    test_input_required_result_tampered_state: (call) =>
      has(call, 'confirm') ? { data: 'Confirmed.' } : { inputRequired: { confirm: elicit('Please confirm', { ok: { type: 'boolean' } }, ['ok']) }, state: { round: 1 } },
    // Session-era questions (elicitation/create, sampling/createMessage on the call's
    // stream): the tab asks through inputRequired as for 2026-07-28 clients; the relay asks a
    // session-era client that declared the capability, and the answer comes back as input.
    test_sampling: (call) => {
      const r = responses(call)?.answer;
      return r ? { data: `LLM response: ${r.content?.text ?? ''}` } : { inputRequired: { answer: sample(call.args?.prompt ?? '', 100) } };
    },
    test_elicitation: (call) => {
      const r = responses(call)?.user;
      if (r) return { data: `User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}` };
      const properties = { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } };
      return { inputRequired: { user: elicit(call.args?.message ?? '', properties, ['username', 'email']) } };
    },
    test_elicitation_sep1034_defaults: (call) => {
      const r = responses(call)?.defaults;
      if (r) return { data: `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}` };
      const properties = {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      };
      return { inputRequired: { defaults: elicit('Please review your details.', properties, []) } };
    },
    test_elicitation_sep1330_enums: (call) => {
      const r = responses(call)?.enums;
      if (r) return { data: `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}` };
      const options = ['option1', 'option2', 'option3'];
      const properties = {
        untitledSingle: { type: 'string', enum: options },
        titledSingle: { type: 'string', oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }] },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', items: { type: 'string', enum: options } },
        titledMulti: { type: 'array', items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] } },
      };
      return { inputRequired: { enums: elicit('Choose your options.', properties, []) } };
    },
    // Long enough that the answer goes on a stream (the relay streams after 500 ms): a
    // 2025-11-25 client with a session sees its priming event, ids and retry.
    test_reconnection: async () => {
      await new Promise((r) => setTimeout(r, 1500));
      return { data: 'Reconnection test finished.' };
    },
    json_schema_2020_12_tool: () => ({ data: 'The schema came through whole.' }),
    test_input_required_result_capabilities: (call) =>
      responses(call)
        ? { data: 'Answered.' }
        : { inputRequired: { user_name: userName, draft: sample('Draft a greeting', 50) } },
    // The tasks extension's fixtures (SEP-2663). The relay makes a task of a call that takes
    // longer than a moment (or asks the person), so the slow ones work a second first.
    greet: (call) => ({ data: `Hello, ${call.args?.name ?? 'World'}!` }),
    slow_compute: async (call) => {
      await sleep(1000 * Number(call.args?.seconds ?? 0));
      return { data: `Computed ${call.args?.label ?? ''} in ${call.args?.seconds ?? 0} s.` };
    },
    failing_job: async () => {
      await sleep(1000);
      throw new Error('The job failed, as this fixture always does.');
    },
    // A protocol-level failure the relay reports: the tab asks for the client's roots, which
    // the suite's client never declares.
    protocol_error_job: async () => {
      await sleep(1000);
      return { inputRequired: { client_roots: roots } };
    },
    confirm_delete: async (call) => {
      if (has(call, 'confirm')) return { data: `Deleted ${call.args?.filename ?? 'the file'}.` };
      await sleep(1000);
      return { inputRequired: { confirm: elicit(`Delete ${call.args?.filename ?? 'the file'}?`, { confirm: { type: 'boolean' } }, ['confirm']) } };
    },
    multi_input: async (call) => {
      if (has(call, 'first', 'second')) return { data: 'Both answers arrived.' };
      await sleep(1000);
      return { inputRequired: { first: userName, second: elicit('What is your favourite colour?', { color: { type: 'string' } }, ['color']) } };
    },
    // Input first (one quick round, no task), then slow work: a task.
    test_tool_with_task: async (call) => {
      const name = responses(call)?.user_name?.content?.name;
      if (!name) return { inputRequired: { user_name: userName } };
      await sleep(1000);
      return { data: `Hello, ${name}! (from a task)` };
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A tool that says two steps and their end through the relay client, 50 ms apart. */
async function saysThreeSteps(tab, call) {
  for (const step of ['Tool execution started.', 'Tool processing data.']) {
    tab.client.asking(call.id, step);
    await sleep(50);
  }
  tab.client.answered(call.id);
  return { data: 'Tool execution completed.' };
}

/** How each tasks fixture takes tasks (the others say nothing: answered in one piece). */
const EXECUTION = {
  greet: { taskSupport: 'forbidden' },
  slow_compute: { taskSupport: 'optional' },
  failing_job: { taskSupport: 'required' },
  protocol_error_job: { taskSupport: 'optional' },
  confirm_delete: { taskSupport: 'optional' },
  multi_input: { taskSupport: 'optional' },
  test_tool_with_task: { taskSupport: 'required' },
};

/** A JSON Schema 2020-12 input schema with the keywords the suite checks are kept whole. */
const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

/** A tool whose `region` argument is mirrored in an `Mcp-Param-Region` header (SEP-2243). */
const CUSTOM_HEADERS = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } },
  required: ['region'],
};
const SCHEMAS = { json_schema_2020_12_tool: SCHEMA_2020_12, test_custom_headers: CUSTOM_HEADERS };

/** The fixture tools as MCP definitions with the person's setting (all run without asking). */
function definitions(changes = 0) {
  const names = Object.keys(fixtures({ client: null }));
  const tools = names.map((name) => ({
    name,
    description: `The conformance suite's fixture ${name}.`,
    inputSchema: SCHEMAS[name] ?? { type: 'object', properties: {} },
    ...(EXECUTION[name] ? { execution: EXECUTION[name] } : {}),
    setting: 'runs',
  }));
  // Each change adds one more tool, so the list really differs.
  for (let i = 1; i <= changes; i += 1) {
    tools.push({ name: `test_added_${i}`, description: 'Added by test_trigger_tool_change.', inputSchema: { type: 'object' }, setting: 'runs' });
  }
  return tools;
}

/** Opens the fixture tab; resolves to the harness's tab with the fixtures answering. */
export async function openFixtureTab() {
  const holder = {};
  const tab = await openTab({ tools: definitions(), run: (call) => holder.fixtures[call.tool]?.(call) ?? { data: null } });
  holder.fixtures = fixtures(tab);
  return tab;
}
