import { describe, expect, it } from 'vitest';
import { describeNodeEventOutcome } from '../../shared/lifecycle/node-join/registration.js';
import { node, nodeClaim } from './registration-fixtures.js';

describe('describeNodeEventOutcome', () => {
  it('names the NodeClaim and Node of a registration instead of carrying the objects', () => {
    const claim = nodeClaim({});
    const registered = node({ name: 'aks-default-abcde' });
    const described = describeNodeEventOutcome({
      outcome: 'registered',
      nodeClaim: claim,
      node: registered,
      nodeName: 'aks-default-abcde',
      nodeWritten: true,
      statusWritten: false,
      unregisteredTaintMissing: false,
    });
    expect(described).toEqual({
      outcome: 'registered',
      nodeClaim: 'default-abcde',
      node: 'aks-default-abcde',
      nodeWritten: true,
      statusWritten: false,
      unregisteredTaintMissing: false,
    });
  });

  it('keeps the reason of every other outcome and names the NodeClaim where there is one', () => {
    const claim = nodeClaim({});
    expect(describeNodeEventOutcome({ outcome: 'ignored', why: 'Node is gone' })).toEqual({
      outcome: 'ignored',
      why: 'Node is gone',
    });
    expect(describeNodeEventOutcome({ outcome: 'skipped', why: 'already registered' })).toEqual({
      outcome: 'skipped',
      why: 'already registered',
    });
    expect(describeNodeEventOutcome({ outcome: 'no-nodeclaim', providerID: 'azure:///x' })).toEqual({
      outcome: 'no-nodeclaim',
      providerID: 'azure:///x',
    });
    expect(describeNodeEventOutcome({ outcome: 'node-not-found', nodeClaim: claim })).toEqual({
      outcome: 'node-not-found',
      nodeClaim: 'default-abcde',
    });
    expect(
      describeNodeEventOutcome({ outcome: 'multiple-nodes', nodeClaim: claim, nodeNames: ['a', 'b'] }),
    ).toEqual({ outcome: 'multiple-nodes', nodeClaim: 'default-abcde', nodeNames: ['a', 'b'] });
    expect(describeNodeEventOutcome({ outcome: 'nodeclaim-gone' })).toEqual({ outcome: 'nodeclaim-gone' });
  });
});
