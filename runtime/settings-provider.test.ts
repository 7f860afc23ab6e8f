/**
 * Choosing the model's provider (ADR 0044): the `provider` setting picks the `model` row's `use`; a model id
 * or a base URL from a later layer sets the row's config and keeps the provider an earlier layer chose.
 */
import { describe, expect, it } from 'vitest';
import type { ComposedRow } from '../plugins/rows.js';
import { applySettings } from './settings.js';

const model = (use: string, config?: Record<string, unknown>): ComposedRow[] => [{ id: 'model', use, ...(config ? { config } : {}), from: 'patch home' }];
const modelRow = (rows: ComposedRow[]) => rows.find((r) => r.id === 'model');

describe('the model row under settings', () => {
  it("--model and --base-url keep a patch's use: the row's config is set, its provider is not replaced by openai", () => {
    const { rows } = applySettings(model('openai-responses', { reasoningEffort: 'high' }), [{ from: 'flag', settings: { model: 'gpt-5.6', baseUrl: 'http://127.0.0.1:9/v1' } }]);
    expect(modelRow(rows)).toEqual({ id: 'model', use: 'openai-responses', config: { reasoningEffort: 'high', model: 'gpt-5.6', baseUrl: 'http://127.0.0.1:9/v1' }, from: 'flag' });
  });

  it('provider switches the wire and keeps the row\'s endpoint config; a model named in the same layer lands on it', () => {
    const { rows } = applySettings(model('openai-chat', { model: 'old', baseUrl: 'http://127.0.0.1:9/v1' }), [{ from: 'flag', settings: { provider: 'openai-responses', model: 'gpt-5.6', reasoningEffort: 'low', maxOutputTokens: 4096 } }]);
    expect(modelRow(rows)).toMatchObject({ use: 'openai-responses', config: { model: 'gpt-5.6', baseUrl: 'http://127.0.0.1:9/v1', reasoningEffort: 'low', maxOutputTokens: 4096 } });
  });

  it('a provider chosen in the config file survives a model on the command line', () => {
    const { rows } = applySettings(model('openai-chat'), [
      { from: 'home', settings: { provider: 'openai-responses' } },
      { from: 'flag', settings: { model: 'gpt-5.6' } },
    ]);
    expect(modelRow(rows)).toMatchObject({ use: 'openai-responses', config: { model: 'gpt-5.6' } });
  });

  it('a scripted row named by a model id becomes chat completions (the default wire); scripted: still names a script', () => {
    expect(modelRow(applySettings(model('scripted', { file: 'a.json' }), [{ from: 'flag', settings: { model: 'gpt-4o' } }]).rows)).toMatchObject({ use: 'openai-chat', config: { model: 'gpt-4o' } });
    expect(modelRow(applySettings(model('openai-responses'), [{ from: 'flag', settings: { model: 'scripted:s.json' } }]).rows)).toMatchObject({ use: 'scripted', config: { file: 's.json' } });
  });
});
