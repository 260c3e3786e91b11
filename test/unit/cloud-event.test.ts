import { describe, expect, it } from 'vitest';
import {
  MalformedEventError,
  parseObjectChangeEvent,
  toCloudEvent,
} from '../../shared/events/cloud-event.js';

const change = {
  kind: 'NodeClaim',
  name: 'a',
  uid: 'u',
  resourceVersion: '1',
  changeType: 'DELETED',
} as const;
const event = (data: object) => ({
  ...toCloudEvent(change, { id: 'e1', source: '/test', time: new Date('2026-01-01T00:00:00Z') }),
  data: { ...change, ...data },
});

describe('object change events', () => {
  it('carry a NodeClaim deletion with its NodePool', () => {
    expect(parseObjectChangeEvent(JSON.stringify(event({ nodePool: 'general' }))).data.nodePool).toBe(
      'general',
    );
  });
  it('may omit the NodePool', () => {
    expect(parseObjectChangeEvent(event({})).data.nodePool).toBeUndefined();
  });
  it.each([[''], [7]])('refuse a NodePool that is not a non-empty string (%j)', (nodePool) => {
    expect(() => parseObjectChangeEvent(event({ nodePool }))).toThrow(
      new MalformedEventError('data.nodePool must be a non-empty string when present'),
    );
  });
});
