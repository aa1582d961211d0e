import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';

const slack = (id: string) => `https://hooks.slack.com/services/T000/B000/${id}`;

const problemsOf = (destinations: Record<string, unknown>) => {
  try {
    parseRelayConfig(JSON.stringify({ auth: { method: 'none' }, destinations }));
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return (error as ConfigInvalidError).problems;
  }
};

describe('escalate and summary, on any destination', () => {
  it('are read on every kind, with the summary in UTC unless a time zone is given', () => {
    const config = parseRelayConfig(
      JSON.stringify({
        auth: { method: 'none' },
        destinations: {
          default: {
            url: slack('a'),
            escalate: { afterMinutes: 240, to: 'oncall' },
            summary: { weekday: 'monday', hour: 9, timeZone: 'Europe/Berlin' },
          },
          teams: { url: 'https://prod-1.westeurope.logic.azure.com/workflows/x', summary: { weekday: 'friday', hour: 16 } },
          oncall: { type: 'pagerduty', routingKey: 'R0123456789abcdef0123456789abcde' },
        },
      }),
    );
    expect(config.destinations['default']?.escalate).toEqual({ afterMinutes: 240, to: 'oncall' });
    expect(config.destinations['default']?.summary).toEqual({ weekday: 'monday', hour: 9, timeZone: 'Europe/Berlin' });
    expect(config.destinations['teams']?.summary).toEqual({ weekday: 'friday', hour: 16, timeZone: 'UTC' });
  });

  it('refuses a summary on a pager, and waits, hours and time zones out of range, each at its path', () => {
    const problems = problemsOf({
      default: { url: slack('a'), summary: { weekday: 'mondy', hour: 24, timeZone: 'Mars/Olympus' } },
      oncall: {
        type: 'pagerduty',
        routingKey: 'R0123456789abcdef0123456789abcde',
        summary: { weekday: 'monday', hour: 9 },
        escalate: { afterMinutes: 0, to: 'default' },
      },
      late: { url: slack('b'), escalate: { afterMinutes: 10081, to: 'default' } },
      half: { url: slack('c'), escalate: { afterMinutes: 1.5, to: 'default' } },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'destinations.default.summary.weekday', problem: expect.stringContaining('"monday"') },
        { path: 'destinations.default.summary.hour', problem: 'must be a whole hour, 0 to 23' },
        { path: 'destinations.default.summary.timeZone', problem: 'must be an IANA time zone such as Europe/Berlin' },
        { path: 'destinations.oncall.summary', problem: 'is not for PagerDuty destinations, which take no weekly summary' },
        { path: 'destinations.oncall.escalate.afterMinutes', problem: 'must be a whole number of minutes, 1 to 10080 (a week)' },
        { path: 'destinations.late.escalate.afterMinutes', problem: 'must be a whole number of minutes, 1 to 10080 (a week)' },
        { path: 'destinations.half.escalate.afterMinutes', problem: 'must be a whole number of minutes, 1 to 10080 (a week)' },
      ]),
    );
    expect(problems).toHaveLength(7);
  });

  it('names an escalation to nowhere, to itself, or round in a loop', () => {
    const problems = problemsOf({
      default: { url: slack('a'), escalate: { afterMinutes: 60, to: 'finops' } },
      finops: { url: slack('b'), escalate: { afterMinutes: 60, to: 'default' } },
      self: { url: slack('c'), escalate: { afterMinutes: 60, to: 'self' } },
      typo: { url: slack('d'), escalate: { afterMinutes: 60, to: 'defualt' } },
      chain: { url: slack('e'), escalate: { afterMinutes: 60, to: 'default' } },
    });
    expect(problems).toEqual([
      { path: 'destinations.default.escalate.to', problem: 'makes escalations loop (default -> finops -> default)' },
      { path: 'destinations.finops.escalate.to', problem: 'makes escalations loop (finops -> default -> finops)' },
      { path: 'destinations.self.escalate.to', problem: 'names this destination itself; escalate to another one' },
      { path: 'destinations.typo.escalate.to', problem: 'names "defualt", which is not a destination; did you mean "default"?' },
    ]);
  });

  it('a typo of either option is named with the option it most likely meant', () => {
    expect(problemsOf({ default: { url: slack('a'), escalte: { afterMinutes: 5, to: 'x' }, sumary: {} } })).toEqual([
      { path: 'destinations.default.escalte', problem: 'unknown key; did you mean "escalate"?' },
      { path: 'destinations.default.sumary', problem: 'unknown key; did you mean "summary"?' },
    ]);
    expect(problemsOf({ default: { url: slack('a'), escalate: { afterMinutes: 5, to: 'x', after: 1 } } })).toEqual([
      { path: 'destinations.default.escalate.after', problem: expect.stringMatching(/^unknown key/) },
      // Listed in the same run: `to` names no destination either.
      { path: 'destinations.default.escalate.to', problem: 'names "x", which is not a destination' },
    ]);
  });
});

describe('a kind that no URL names', () => {
  it('is never guessed from its keys: without `type` the problem says which type to add', () => {
    expect(
      problemsOf({
        default: { url: slack('a') },
        tickets: { site: 'https://example.atlassian.net', project: 'OPS', email: 'a@example.com', apiToken: 'token-value' },
        oncall: { routingKey: 'R0123456789abcdef0123456789abcde' },
        bus: { eventBus: 'default' },
      }),
    ).toEqual([
      { path: 'destinations.tickets.type', problem: 'is required: "site" belongs to Jira destinations; add "type": "jira"' },
      { path: 'destinations.oncall.type', problem: 'is required: "routingKey" belongs to PagerDuty destinations; add "type": "pagerduty"' },
      { path: 'destinations.bus.type', problem: 'is required: "eventBus" belongs to EventBridge destinations; add "type": "eventbridge"' },
    ]);
  });

  it('a key only such a kind takes, on a destination read as the kind its URL names, says which type was left out', () => {
    // Read as Slack (a URL of no known host): Slack's "unknown key" alone would not say what is wrong.
    expect(
      problemsOf({
        default: { url: slack('a') },
        oncall: { url: 'https://events.example.com/v2/enqueue', severity: 'error' },
        tickets: { url: slack('b'), labels: ['cost'] },
      }),
    ).toEqual([
      { path: 'destinations.oncall', problem: 'unknown key "severity"; a PagerDuty destination needs "type": "pagerduty"' },
      { path: 'destinations.tickets', problem: 'unknown key "labels"; a Jira destination needs "type": "jira"' },
    ]);
    // A key no kind takes is a typo, as before.
    expect(problemsOf({ default: { url: slack('a'), mentoin: '<!here>' } })).toEqual([
      { path: 'destinations.default.mentoin', problem: 'unknown key; did you mean "mention"?' },
    ]);
  });

  it('a misspelt type names the types and the one it is closest to', () => {
    expect(
      problemsOf({ default: { url: slack('a') }, oncall: { type: 'pagerduti', routingKey: 'R0123456789abcdef0123456789abcde' } }),
    ).toEqual([
      {
        path: 'destinations.oncall.type',
        problem: expect.stringMatching(/^must be one of "slack", "teams", .*"eventbridge".*; did you mean "pagerduty"\?$/),
      },
    ]);
  });
});
