/**
 * The microsteps a step of one call takes (#26, ADR 0091): each decision is taken in the transition that brings what
 * it decides on, so a transient state added on the simple step's path fails here.
 */
import { describe, expect, it } from 'vitest';
import { bridleTurnMicrosteps, floorTurnMicrosteps, microstepsPerStep } from './microsteps.js';

describe('microsteps per step of one call', () => {
  it("bridle's: 2 in the turn, 8 in the step (4 of them its stream's chunks, the first chunk's timing riding one: ADR 0110), 4 in the call — 14 in all", async () => {
    expect(await microstepsPerStep(bridleTurnMicrosteps)).toEqual({ total: 14, turn: 2, step: 8, 'tool-call': 4 });
  });

  it("the floor's, the same machines and the same events", async () => {
    expect(await microstepsPerStep(floorTurnMicrosteps)).toEqual({ total: 14, turn: 2, step: 8, 'tool-call': 4 });
  });
});
