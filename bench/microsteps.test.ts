/**
 * The microsteps a step of one call takes (#26, ADR 0091): each decision is taken in the transition that brings what
 * it decides on, so a transient state added on the simple step's path fails here.
 */
import { describe, expect, it } from 'vitest';
import { bridleTurnMicrosteps, floorTurnMicrosteps, microstepsPerStep } from './microsteps.js';

describe('microsteps per step of one call', () => {
  it("bridle's: 2 in the turn, 9 in the step (5 of them its stream's chunks), 4 in the call — 15 in all", async () => {
    expect(await microstepsPerStep(bridleTurnMicrosteps)).toEqual({ total: 15, turn: 2, step: 9, 'tool-call': 4 });
  });

  it("the floor's, the same machines: one chunk fewer in the stream", async () => {
    expect(await microstepsPerStep(floorTurnMicrosteps)).toEqual({ total: 14, turn: 2, step: 8, 'tool-call': 4 });
  });
});
