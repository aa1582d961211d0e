import { describe, expect, it } from 'vitest';
import report from '../../events/recommendation-report.json' with { type: 'json' };
import { describeIssues } from '../../lib/config/schema.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';

const paths = (value: unknown) => {
  const result = webhookMessageSchema.safeParse(value);
  return result.success ? [] : describeIssues(result.error).map((p) => p.path);
};

describe('webhook message schema', () => {
  it('accepts ids sent as numbers as text, and ignores unknown members', () => {
    const parsed = webhookMessageSchema.parse({ ...report, extra: 1, payload: { ...report.payload, severity: 'high' } });
    expect(parsed.payload.account_id).toBe('210987654321');
    expect(parsed.payload).not.toHaveProperty('severity');
  });

  it('treats null as absent', () => {
    const parsed = webhookMessageSchema.parse({
      metadata: { object_type: 'anomaly_alert', timestamp: null },
      payload: { title: 'T', message: null, account_id: null },
    });
    expect(parsed.payload.message).toBeUndefined();
    expect(parsed.metadata.timestamp).toBeUndefined();
  });

  it('names the missing parts by path', () => {
    expect(paths({})).toEqual(['metadata', 'payload']);
    expect(paths({ metadata: {}, payload: { title: 'x' } })).toEqual(['metadata.object_type']);
    expect(paths({ metadata: { object_type: ' ' }, payload: { title: 'x' } })).toEqual(['metadata.object_type']);
    expect(paths({ metadata: { object_type: 'a' }, payload: { title: '  ', message: '' } })).toEqual(['payload']);
    expect(paths({ metadata: { object_type: 'a' }, payload: { title: { nested: true } } })).toEqual(['payload.title']);
    expect(paths([])).toEqual(['(root)']);
  });

  it('never puts the offending value into a problem description', () => {
    const result = webhookMessageSchema.safeParse({ metadata: { object_type: 42 }, payload: { title: ['s3cret-value'] } });
    expect(result.success).toBe(false);
    expect(JSON.stringify(describeIssues(result.error!))).not.toContain('s3cret-value');
  });
});
