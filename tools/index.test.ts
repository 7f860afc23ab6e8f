import { describe, expect, it } from 'vitest';
import { builtinTools, knownToolLookup, optionalTools, toolSpec } from './index.js';

describe('builtinTools', () => {
  it('offers the seven tools in a fixed order with one-line presenters', () => {
    const tools = builtinTools();
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'write_file', 'edit_file', 'list_dir', 'glob', 'grep', 'bash']);
    expect(tools.filter((t) => t.readOnly).map((t) => t.name)).toEqual(['read_file', 'list_dir', 'glob', 'grep']);
    for (const t of tools) expect(t.description.length, t.name).toBeGreaterThan(20);
  });
});

describe('optionalTools', () => {
  it('holds the built-ins base leaves out (update_plan), which the lookup of every built-in presents too', () => {
    expect(optionalTools().map((t) => t.name)).toEqual(['update_plan']);
    expect([...knownToolLookup().keys()]).toEqual([...builtinTools(), ...optionalTools()].map((t) => t.name));
  });
});

describe('toolSpec', () => {
  it('emits only name, description and parameters, without $schema (I7)', () => {
    for (const def of builtinTools()) {
      const spec = toolSpec(def);
      expect(Object.keys(spec)).toEqual(['name', 'description', 'parameters']);
      expect(spec.parameters).not.toHaveProperty('$schema');
      expect(spec.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
    }
  });

  it('describes every parameter for the model', () => {
    for (const def of [...builtinTools(), ...optionalTools()]) {
      const properties = toolSpec(def).parameters.properties as Record<string, { description?: string }>;
      for (const [key, schema] of Object.entries(properties)) expect(schema.description, `${def.name}.${key}`).toBeTruthy();
    }
  });

  it('renders read_file as expected', () => {
    const spec = toolSpec(builtinTools()[0]!);
    expect(spec.parameters).toMatchObject({
      required: ['path'],
      properties: { path: { type: 'string' }, offset: { type: 'integer', minimum: 1 }, limit: { type: 'integer' } },
    });
  });
});
