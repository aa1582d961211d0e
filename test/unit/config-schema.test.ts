import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';
import { destinationType } from '../../lib/notify/kinds.js';

const problemsOf = (value: unknown) => {
  try {
    parseRelayConfig(JSON.stringify(value));
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return (error as ConfigInvalidError).problems;
  }
};
const url = 'https://hooks.slack.com/services/T000/B000/SECRETPART';

describe('relay configuration', () => {
  it('accepts the contract example shape and the minimal one', () => {
    expect(
      problemsOf({
        auth: {
          method: 'basic',
          basic: { username: 'relay', password: 's3cret' },
          sso: { issuer: 'https://idp.example.com/oauth2/default', clientId: '0oa1', scope: 'cost-alerts', audience: 'optional' },
          headers: [{ key: 'X-Channel-Token', value: 'abc' }],
        },
        destinations: { default: { url }, 'finops-aws': { url, mention: '<!here>' } },
        routes: [{ when: { objectType: ['anomaly_alert'], cloudProvider: ['aws'] }, to: ['finops-aws'] }],
      }),
    ).toEqual([]);
    expect(problemsOf({ auth: { method: 'none' }, destinations: { default: { url: 'http://127.0.0.1:9/x' } } })).toEqual([]);
  });

  it('requires the chosen method settings, a default destination, and known route targets', () => {
    const paths = problemsOf({
      auth: { method: 'basic' },
      destinations: { other: { url } },
      routes: [{ when: {}, to: ['nowhere'] }],
    }).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['auth.basic', 'destinations.default', 'routes.0.to.0']));
  });

  it('lists every problem in one run: a wrong part and what the parts say of each other, a pager’s summary and its key', () => {
    const problems = problemsOf({
      auth: { method: 'basc' },
      destinations: {
        default: { url: 'http://example.com/x' },
        pd: { type: 'pagerduty', routingKey: 'short', summary: { weekday: 'monday', hour: 9 } },
        app: { channel: 'C0123ABCD' },
        storm: { url, group: { waitSeconds: 5 }, escalate: { afterMinutes: 30, to: 'oncal' } },
      },
      routes: [{ when: { objectTyp: ['anomaly_alert'] }, to: ['finops'] }],
    });
    expect(problems.map((p) => p.path).sort()).toEqual(
      [
        'auth.method',
        'destinations.default.url',
        'destinations.pd.routingKey',
        'destinations.pd.summary',
        'destinations.storm.group.waitSeconds',
        'destinations.storm.escalate.to',
        'routes.0.when.objectTyp',
        'routes.0.to.0',
        'slack',
      ].sort(),
    );
  });

  it('refuses plain http to other hosts, untrusted mention forms and bad header names', () => {
    const paths = problemsOf({
      auth: {
        method: 'none',
        headers: [
          { key: 'Bad Header', value: 'x' },
          { key: 'Authorization', value: 'y' },
        ],
      },
      destinations: {
        default: { url: 'http://hooks.slack.com/services/x' },
        a: { url, mention: '<https://evil|click>' },
        b: { url, mention: '<!everyone>' },
      },
    }).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'auth.headers.0.key',
        'auth.headers.1.key',
        'destinations.default.url',
        'destinations.a.mention',
        'destinations.b.mention',
      ]),
    );
  });

  it('infers the type from the host, takes it when given, and keeps Slack-only configurations as they were', () => {
    const teams =
      'https://prod-12.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=SIG';
    const powerPlatform =
      'https://default1.2a.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=SIG';
    const chat = 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=KEY&token=TOKEN%3D';
    const config = parseRelayConfig(
      JSON.stringify({
        auth: { method: 'none' },
        destinations: {
          default: { url },
          teams: { url: teams, mention: { id: 'jane@example.com', name: 'Jane Doe' } },
          pp: { url: powerPlatform, mention: { id: '0f8fad5b-d9cb-469f-a165-70867728950e', name: "Ops O'Neil" } },
          chat: { url: chat, mention: '<users/all>' },
          person: { url: chat, mention: '<users/123456789>' },
          local: { type: 'teams', url: 'http://127.0.0.1:9/teams' },
          other: { url: 'https://chat.example.com/hook' },
        },
      }),
    );
    const types = Object.fromEntries(Object.entries(config.destinations).map(([name, d]) => [name, destinationType(d)]));
    expect(types).toEqual({
      default: 'slack',
      teams: 'teams',
      pp: 'teams',
      chat: 'googlechat',
      person: 'googlechat',
      local: 'teams',
      other: 'slack',
    });
  });

  it('refuses retired Office 365 connector URLs, saying why, and mentions that do not fit the type', () => {
    const problems = problemsOf({
      auth: { method: 'none' },
      destinations: {
        default: { url: 'https://contoso.webhook.office.com/webhookb2/abc@def/IncomingWebhook/123/456' },
        slack: { url, mention: { id: 'jane@example.com', name: 'Jane' } },
        teams: { url: 'https://prod-1.westus.logic.azure.com/workflows/x?sig=S', mention: '<!here>' },
        chat: { url: 'https://chat.googleapis.com/v1/spaces/A/messages?key=K&token=T', mention: '<!channel>' },
        chatLink: { url: 'https://chat.googleapis.com/v1/spaces/A/messages?key=K&token=T', mention: '<https://evil|x>' },
        badName: { type: 'teams', url: 'https://x.logic.azure.com/w', mention: { id: 'jane@example.com', name: '<b>Jane</b>' } },
        badType: { type: 'discord', url },
      },
    });
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.problem]));
    expect(byPath['destinations.default.url']).toMatch(/Office 365 connector.*retired.*workflow/);
    expect(byPath['destinations.slack.mention']).toMatch(/for a Slack destination/);
    expect(byPath['destinations.teams.mention']).toMatch(/\{"id".*"name".*\} for a Teams destination/);
    expect(byPath['destinations.chat.mention']).toMatch(/<users\/all>.*for a Google Chat destination/);
    expect(byPath['destinations.chatLink.mention']).toBeDefined();
    expect(byPath['destinations.badName.mention.name']).toBeDefined();
    expect(byPath['destinations.badType.type']).toBeDefined();
    expect(JSON.stringify(problems)).not.toMatch(/token=T|sig=S|IncomingWebhook\/123/);
  });

  it('describes problems without the values', () => {
    const problems = problemsOf({
      auth: { method: 'basic', basic: { username: 'has:colon-secretuser', password: 12345678 } },
      destinations: { default: { url: 'ftp://secret-host/hook' } },
    });
    expect(problems.map((p) => p.path)).toEqual(['auth.basic.username', 'auth.basic.password', 'destinations.default.url']);
    const text = JSON.stringify(problems);
    for (const value of ['secretuser', '12345678', 'secret-host']) expect(text).not.toContain(value);
  });

  it('reports JSON that does not parse', () => {
    expect(() => parseRelayConfig('{oops')).toThrow(ConfigInvalidError);
  });
});

describe('a typo is an error naming its path, never a check switched off', () => {
  const base = { auth: { method: 'basic', basic: { username: 'relay', password: 'hunter2-secret' } }, destinations: { default: { url } } };

  it.each([
    ['auth.header', { ...base, auth: { ...base.auth, header: [{ key: 'X-Token', value: 'v' }] } }, 'headers'],
    ['routes.0.when.objecttype', { ...base, routes: [{ when: { objecttype: ['anomaly_alert'] }, to: ['default'] }] }, 'objectType'],
    ['destinations.default.mentoin', { ...base, destinations: { default: { url, mentoin: '<!here>' } } }, 'mention'],
    [
      'auth.sso.audiance',
      {
        auth: { method: 'sso', sso: { issuer: 'https://idp.example.com', clientId: 'c', scope: 's', audiance: 'api' } },
        destinations: { default: { url } },
      },
      'audience',
    ],
    ['auth.basic.pasword', { ...base, auth: { method: 'basic', basic: { username: 'relay', password: 'x', pasword: 'y' } } }, 'password'],
  ])('%s', (path, config, hint) => {
    const problems = problemsOf(config);
    expect(problems).toContainEqual({ path, problem: `unknown key; did you mean "${hint}"?` });
    expect(JSON.stringify(problems)).not.toContain('hunter2-secret');
  });

  it('an unknown key with nothing close is still named', () => {
    expect(problemsOf({ ...base, colour: 'blue' })).toEqual([{ path: 'colour', problem: 'unknown key' }]);
  });

  it('a destination or header named like an Object property is just a name', () => {
    expect(problemsOf({ ...base, destinations: { default: { url }, constructor: { url } } })).toEqual([]);
    // Written as JSON text: in an object literal __proto__ would set the prototype instead.
    const raw = `{"auth":{"method":"none"},"destinations":{"default":{"url":"${url}"},"__proto__":{"url":"${url}"}},"routes":[{"to":["__proto__"]}]}`;
    expect(problemsOf(JSON.parse(raw))).toContainEqual({ path: 'destinations.__proto__', problem: 'is not a usable destination name' });
    expect(problemsOf({ ...base, routes: [{ to: ['constructor'] }], destinations: { default: { url }, constructor: { url } } })).toEqual(
      [],
    );
    expect(problemsOf({ ...base, routes: [{ to: ['toString'] }] }).map((p) => p.path)).toEqual(['routes.0.to.0']);
  });
});

describe('problems in our words', () => {
  const problemsOf = (text: string) => {
    try {
      parseRelayConfig(text);
    } catch (error) {
      if (error instanceof ConfigInvalidError) return error.problems;
      throw error;
    }
    throw new Error('expected the configuration to be refused');
  };

  it('a JSON syntax error says where, by line and column, and never quotes the text', () => {
    const text =
      '{\n  "auth": { "method": "basic", "basic": { "username": "relay", "password": "hunter2-secret" } }\n  "destinations": {}\n}';
    const [problem, ...rest] = problemsOf(text);
    expect(rest).toEqual([]);
    expect(problem).toEqual({ path: 'line 3, column 3', problem: 'not valid JSON: expected "," or "}" after a property value' });
    expect(JSON.stringify(problemsOf('{"basic": "hunter2-secret" x}'))).not.toContain('hunter2');
    expect(problemsOf('{"auth": {"method": "none"},}')[0]).toMatchObject({
      path: 'line 1, column 29',
      problem: expect.stringContaining('no trailing comma'),
    });
  });

  it('a route to an unknown destination names it, with the name it most likely meant', () => {
    const config = {
      auth: { method: 'none' },
      destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x' }, ops: { url: 'https://hooks.slack.com/services/T/B/y' } },
    };
    const problems = problemsOf(JSON.stringify({ ...config, routes: [{ to: ['opps', 'finance'] }] }));
    expect(problems).toEqual([
      { path: 'routes.0.to.0', problem: 'names "opps", which is not a destination; did you mean "ops"?' },
      { path: 'routes.0.to.1', problem: 'names "finance", which is not a destination' },
    ]);
  });

  it('a URL whose host contradicts the given type is refused, naming both', () => {
    const url = 'https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t';
    const problems = problemsOf(JSON.stringify({ auth: { method: 'none' }, destinations: { default: { type: 'slack', url } } }));
    expect(problems).toEqual([
      {
        path: 'destinations.default.type',
        problem: 'is "slack", but the URL is a Google Chat webhook: use "type": "googlechat" or leave type out',
      },
    ]);
    expect(JSON.stringify(problems)).not.toContain('token=t');
    // A host that names no service (a proxy, a console destination) may be any type.
    expect(() =>
      parseRelayConfig(
        JSON.stringify({
          auth: { method: 'none' },
          destinations: { default: { type: 'googlechat', url: 'http://127.0.0.1:3000/console/googlechat' } },
        }),
      ),
    ).not.toThrow();
  });

  it("says what is expected, never in the validation library's words and never with the value", () => {
    const problems = problemsOf(JSON.stringify({ auth: { method: 'magic' }, destinations: { default: { url: 12345 } } }));
    expect(problems).toEqual([
      { path: 'auth.method', problem: 'must be one of "none", "basic", "sso"' },
      { path: 'destinations.default.url', problem: 'must be text' },
    ]);
    expect(problemsOf('{}')).toEqual([
      { path: 'auth', problem: 'is required' },
      { path: 'destinations', problem: 'is required' },
    ]);
    const text = JSON.stringify(
      problemsOf(JSON.stringify({ auth: { method: 'none', headers: [{ key: 'X-Token', value: '' }] }, destinations: [] })),
    );
    expect(text).not.toMatch(/Invalid input|expected|received|Too small|Too big/);
  });
});
