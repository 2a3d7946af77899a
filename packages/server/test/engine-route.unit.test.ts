import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type CircuitRecord,
  chooseEngine,
  circuitState,
  type EngineRoute,
  type RoutingSnapshot,
} from '../src/domain/engine-route.js';

const POLICY = { failures: 3, cooldownMs: 30_000 };
const NOW = 1_000_000;

function snapshot(parts: Partial<RoutingSnapshot> = {}): RoutingSnapshot {
  return {
    now: NOW,
    inFlight: new Map(),
    maxConcurrency: new Map(),
    circuits: new Map(),
    circuit: POLICY,
    ...parts,
  };
}

const open: CircuitRecord = { failures: 3, openUntil: NOW + 1, trialUntil: null };
const cooled: CircuitRecord = { failures: 3, openUntil: NOW, trialUntil: null };

describe('choosing an engine along a route', () => {
  const route: EngineRoute = [
    [{ engine: 'ark', weight: 1 }],
    [
      { engine: 'gpu-a', weight: 3 },
      { engine: 'gpu-b', weight: 1 },
    ],
    [{ engine: 'local', weight: 1 }],
  ];

  it('takes the first step while it has room and a closed circuit', () => {
    assert.deepEqual(
      chooseEngine(route, snapshot(), () => 0.99),
      { kind: 'engine', engine: 'ark', trial: false },
    );
  });

  it('skips an open circuit and an engine the task failed on, and splits a step by weight', () => {
    const circuits = new Map([['ark', open]]);
    assert.deepEqual(
      chooseEngine(route, snapshot({ circuits }), () => 0.74),
      {
        kind: 'engine',
        engine: 'gpu-a',
        trial: false,
      },
    );
    assert.deepEqual(
      chooseEngine(route, snapshot({ circuits }), () => 0.75),
      {
        kind: 'engine',
        engine: 'gpu-b',
        trial: false,
      },
    );
    assert.deepEqual(
      chooseEngine(route, snapshot(), () => 0, new Set(['ark', 'gpu-a'])),
      {
        kind: 'engine',
        engine: 'gpu-b',
        trial: false,
      },
    );
  });

  it('waits when the first usable step is full, rather than falling through to a later one', () => {
    const full = snapshot({
      circuits: new Map([['ark', open]]),
      maxConcurrency: new Map([
        ['gpu-a', 2],
        ['gpu-b', 1],
      ]),
      inFlight: new Map([
        ['gpu-a', 2],
        ['gpu-b', 1],
      ]),
    });
    assert.deepEqual(
      chooseEngine(route, full, () => 0),
      { kind: 'wait' },
    );
    const oneFree = snapshot({ ...full, inFlight: new Map([['gpu-a', 2]]) });
    assert.deepEqual(
      chooseEngine(route, oneFree, () => 0),
      { kind: 'engine', engine: 'gpu-b', trial: false },
    );
  });

  it('lets one trial task through a circuit whose cool-down ended', () => {
    assert.equal(circuitState(cooled, POLICY, NOW), 'half-open');
    assert.deepEqual(
      chooseEngine(route, snapshot({ circuits: new Map([['ark', cooled]]) }), () => 0),
      {
        kind: 'engine',
        engine: 'ark',
        trial: true,
      },
    );
    const trialRunning = { ...cooled, trialUntil: NOW + 5000 };
    assert.equal(circuitState(trialRunning, POLICY, NOW), 'open');
    assert.equal(circuitState({ failures: 2, openUntil: null, trialUntil: null }, POLICY, NOW), 'closed');
  });

  it('says none when every engine is open or excluded', () => {
    const circuits = new Map([
      ['ark', open],
      ['gpu-a', open],
    ]);
    assert.deepEqual(
      chooseEngine(route, snapshot({ circuits }), () => 0, new Set(['gpu-b', 'local'])),
      {
        kind: 'none',
      },
    );
  });

  it('never picks an excluded, open or full engine, and picks whenever some step has a usable engine with room', () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const engineArb = fc.constantFrom(...names);
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(engineArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
        fc.dictionary(engineArb, fc.integer({ min: 0, max: 3 })),
        fc.dictionary(engineArb, fc.integer({ min: 1, max: 3 })),
        fc.uniqueArray(engineArb),
        fc.uniqueArray(engineArb),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (steps, inFlight, caps, openOnes, excluded, random) => {
          const route: EngineRoute = steps.map((step) => step.map((engine) => ({ engine, weight: 1 })));
          const snap = snapshot({
            inFlight: new Map(Object.entries(inFlight)),
            maxConcurrency: new Map(Object.entries(caps)),
            circuits: new Map(openOnes.map((engine) => [engine, open])),
          });
          const exclude = new Set(excluded);
          const usable = (engine: string) => !exclude.has(engine) && !openOnes.includes(engine);
          const hasRoom = (engine: string) =>
            caps[engine] === undefined || (inFlight[engine] ?? 0) < caps[engine];
          const choice = chooseEngine(route, snap, () => random, exclude);
          const firstUsableStep = route.find((step) => step.some(({ engine }) => usable(engine)));
          if (choice.kind === 'engine') {
            assert.ok(usable(choice.engine) && hasRoom(choice.engine));
            assert.ok(firstUsableStep?.some(({ engine }) => engine === choice.engine));
          } else if (choice.kind === 'wait') {
            assert.ok(
              firstUsableStep && !firstUsableStep.some(({ engine }) => usable(engine) && hasRoom(engine)),
            );
          } else {
            assert.equal(firstUsableStep, undefined);
          }
        },
      ),
    );
  });
});
