/**
 * What a simulated service does with one request, drawn from the seed: answer, refuse for a while
 * (429 with Retry-After, 5xx), hang until the caller gives up, take the post and answer too late,
 * or take the post and lose the answer. The last two are the ambiguous ones: the post is shown,
 * and the caller cannot know it.
 */
export type Fault = 'none' | 'throttle' | 'unavailable' | 'hang' | 'late' | 'lost';

export const FAULTS: readonly Fault[] = ['none', 'throttle', 'unavailable', 'hang', 'late', 'lost'];

/** Whether the service took (and shows) the post despite the fault. */
export const takesPost = (fault: Fault): boolean => fault === 'none' || fault === 'late' || fault === 'lost';

export interface FaultPlan {
  /** The fault for the next request to `service` (a destination address, or a service's name). */
  next(service: string): Fault;
}

/** How often each fault happens, per request, where faults are on. */
export interface FaultRates {
  throttle: number;
  unavailable: number;
  hang: number;
  late: number;
  lost: number;
}

export const NO_FAULTS: FaultRates = { throttle: 0, unavailable: 0, hang: 0, late: 0, lost: 0 };

/**
 * Faults come in spells, as outages do: a service is healthy, or in a spell of one fault that lasts
 * a few requests. Which spell and how long are drawn from the seed.
 */
export function spellFaults(random: () => number, rates: (service: string) => FaultRates): FaultPlan {
  const spells = new Map<string, { fault: Fault; left: number }>();
  return {
    next(service) {
      const spell = spells.get(service);
      if (spell && spell.left > 0) {
        spell.left -= 1;
        return spell.fault;
      }
      const r = rates(service);
      let pick = random();
      for (const fault of ['throttle', 'unavailable', 'hang', 'late', 'lost'] as const) {
        if (pick < r[fault]) {
          spells.set(service, { fault, left: Math.floor(random() * 4) });
          return fault;
        }
        pick -= r[fault];
      }
      return 'none';
    },
  };
}
