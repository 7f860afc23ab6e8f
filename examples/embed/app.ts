/** Another app embedding bridle: its session machine, with this app's own model and tool. */
import { tmpdir } from 'node:os';
import { z } from 'zod';
import { createMemoryStore, createSession, type Chunk, type ModelProvider, type ToolDefinition } from '../../index.js';

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
  const session = createSession({ id: 'embed', cwd: process.cwd(), bridleHome: tmpdir(), model, modelName: model.id, store: createMemoryStore(), clock: Date.now, tools: [weather], approval: 'auto' });
  await session.run(question);
  await session.close();
  const answer = session.recorder.entries.filter((e) => e.kind === 'assistant/message').pop();
  return answer?.kind === 'assistant/message' ? answer.blocks.map((b) => (b.type === 'text' ? b.text : '')).join('') : '';
}

if (process.argv[1]?.endsWith('app.js')) console.log(await ask('What is the weather in Lisbon?'));
