/**
 * Routing a model ID across engines: the route is a list of steps tried in order (fallback), and the engines
 * of one step are equivalent and share its tasks by weight (balancing). Which engine a task goes to depends on
 * each engine's tasks in flight against its `max_concurrency` and on its circuit breaker; this module decides
 * from a snapshot of both, and the store takes the snapshot and writes the choice in one transaction.
 */

/** One engine of a step, by its name in the engines file, with its share of the step's tasks. */
export interface WeightedEngine {
  readonly engine: string;
  readonly weight: number;
}

/** Steps tried in order; the engines of a step are equivalent. */
export type EngineRoute = readonly (readonly WeightedEngine[])[];

/** An engine's circuit breaker as the store keeps it. */
export interface CircuitRecord {
  /** Unavailability failures in a row since the last success. */
  readonly failures: number;
  /** While open: the end of the cool-down (epoch ms). */
  readonly openUntil: number | null;
  /** After the cool-down: the one trial task holds the engine until then (epoch ms). */
  readonly trialUntil: number | null;
}

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitPolicy {
  /** Failures in a row that open the circuit. */
  readonly failures: number;
  /** How long it stays open before one trial task, in ms. */
  readonly cooldownMs: number;
}

/** What a choice sees: the engines' tasks in flight, their caps and their circuits, at `now`. */
export interface RoutingSnapshot {
  readonly now: number;
  readonly inFlight: ReadonlyMap<string, number>;
  readonly maxConcurrency: ReadonlyMap<string, number>;
  readonly circuits: ReadonlyMap<string, CircuitRecord>;
  readonly circuit: CircuitPolicy;
}

export function circuitState(
  record: CircuitRecord | undefined,
  policy: CircuitPolicy,
  now: number,
): CircuitState {
  if (!record || record.failures < policy.failures) return 'closed';
  if (record.openUntil !== null && record.openUntil > now) return 'open';
  if (record.trialUntil !== null && record.trialUntil > now) return 'open';
  return 'half-open';
}

/**
 * Where a task goes: `engine` (with `trial` when it is the one task a half-open circuit lets through), `wait`
 * when the first step with a usable engine has no room (the task stays pending; capacity is not
 * unavailability, so it does not fall through to a later step), or `none` when every engine of the route is
 * open-circuited or excluded.
 */
export type EngineChoice =
  | { readonly kind: 'engine'; readonly engine: string; readonly trial: boolean }
  | { readonly kind: 'wait' }
  | { readonly kind: 'none' };

/**
 * Chooses an engine of `route` for one task. `exclude`: engines this task already failed on. `random` in [0, 1)
 * picks among the usable engines of the step with room, by weight.
 */
export function chooseEngine(
  route: EngineRoute,
  snapshot: RoutingSnapshot,
  random: () => number,
  exclude: ReadonlySet<string> = new Set(),
): EngineChoice {
  for (const step of route) {
    const usable = step.filter(
      ({ engine }) =>
        !exclude.has(engine) &&
        circuitState(snapshot.circuits.get(engine), snapshot.circuit, snapshot.now) !== 'open',
    );
    if (usable.length === 0) continue;
    const withRoom = usable.filter(({ engine }) => {
      const cap = snapshot.maxConcurrency.get(engine);
      return cap === undefined || (snapshot.inFlight.get(engine) ?? 0) < cap;
    });
    if (withRoom.length === 0) return { kind: 'wait' };
    const engine = pickByWeight(withRoom, random);
    const trial = circuitState(snapshot.circuits.get(engine), snapshot.circuit, snapshot.now) === 'half-open';
    return { kind: 'engine', engine, trial };
  }
  return { kind: 'none' };
}

function pickByWeight(engines: readonly WeightedEngine[], random: () => number): string {
  const total = engines.reduce((sum, { weight }) => sum + weight, 0);
  let point = random() * total;
  for (const { engine, weight } of engines) {
    if (point < weight) return engine;
    point -= weight;
  }
  return engines[engines.length - 1]?.engine ?? '';
}

/** Every engine a route names, once each, in route order. */
export function routeEngines(route: EngineRoute): string[] {
  return [...new Set(route.flatMap((step) => step.map(({ engine }) => engine)))];
}
