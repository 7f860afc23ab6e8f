/**
 * Row modules that replace `loop:agent` (ADR 0085): bridle's own loop with the turn stopped after two steps, and
 * the same module changed to stop after three — another loop, for a log that names the first.
 */
export const TWO_STEPS = `export default { name: 'two-steps', inject: ['machines'], provides: ['agent-loop'], apply(ctx) { ctx.provide('agent-loop', ctx.get('machines').refine({ turn: (m) => m.provide({ guards: { isAtMaxSteps: ({ context }) => context.steps >= 2 } }) }, 'two-steps')); } };\n`;
/** The same loop's module, changed: one more step before the turn stops. */
export const THREE_STEPS = TWO_STEPS.replace('>= 2', '>= 3').replaceAll('two-steps', 'three-steps');
