import { type InvocationBudget, invocationBudget } from '../../lib/shared/deadline.js';

/** An invocation with `ms` left, or with whatever `remaining` says at each step. */
export const budgetOf = (ms: number | (() => number)): InvocationBudget =>
  invocationBudget({ getRemainingTimeInMillis: typeof ms === 'number' ? () => ms : ms });
