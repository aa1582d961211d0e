/**
 * The destination kinds a configuration may name, defined once. lib/notify/kinds.ts registers
 * one kind for each, and the compiler refuses a type without its kind.
 */
export const DESTINATION_TYPES = ['slack', 'teams', 'googlechat', 'pagerduty', 'jira', 'eventbridge'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
