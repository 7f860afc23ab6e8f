/** Another app embedding bridle: its session machine, with this app's own model and tool. */
import { tmpdir } from 'node:os';
import { z } from 'zod';
import { createSession, type Chunk, type ModelProvider, type ToolDefinition } from '../../index.js';

const weather: ToolDefinition<{ city: string }> = {
  name: 'weather',
  description: 'The weather in a city right now.',
  parameters: z.object({ city: z.string() }),
  readOnly: true,
  idempotent: true,
  present: ({ city }) => `weather in ${city}`,
  execute: async ({ city }) => ({ status: 'ok', content: `${city}: 21°C, clear sky` }),
};
// A model of our own: asks for the weather once, then reports what the tool said.
const model: ModelProvider = {
  id: 'tiny-model',
  async *stream(request): AsyncIterable<Chunk> {
    const last = request.messages[request.messages.length - 1]!;
    const block = last.role === 'tool' ? ({ type: 'text' } as const) : ({ type: 'tool-call', id: 'w1', name: 'weather' } as const);
    yield { type: 'block-start', index: 0, block };
    if (last.role === 'tool') yield { type: 'text-delta', index: 0, text: `Right now: ${last.content}.` };
    else yield { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":"Lisbon"}' };
    yield { type: 'block-end', index: 0 };
    yield { type: 'finish', finish: { kind: 'ok', reason: last.role === 'tool' ? 'stop' : 'tool-calls' } };
  },
};

export async function ask(question: string): Promise<string> {
  // The base product, this app's model and tool in the place of the rows', its log in memory.
  const session = createSession({ cwd: process.cwd(), bridleHome: tmpdir(), services: { model, tools: [weather] }, patch: [{ id: 'store', use: 'memory' }], settings: { approval: 'auto' } });
  let text = '';
  session.subscribe((e) => void (e.type === 'entry.appended' && e.entry.kind === 'assistant/message' && (text = e.entry.blocks.map((b) => (b.type === 'text' ? b.text : '')).join(''))));
  await session.start().run(question);
  await session.close();
  return text;
}

if (process.argv[1]?.endsWith('app.js')) console.log(await ask('What is the weather in Lisbon?'));
