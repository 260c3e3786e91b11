import { describe, expect, it } from 'vitest';
import { podRequests, toResourceList } from '../../../shared/decisions/scheduling/resources.js';
import type { SchedulingPodSpec } from '../../../shared/decisions/scheduling/types.js';

const c = (cpu: string, memory?: string, restartPolicy?: string) => ({
  resources: { requests: { cpu, ...(memory ? { memory } : {}) } },
  ...(restartPolicy ? { restartPolicy } : {}),
});

describe('podRequests (kube-scheduler effective requests)', () => {
  it.each<[string, SchedulingPodSpec, Record<string, string>]>([
    [
      'one container plus one pod',
      { containers: [c('500m', '1Gi')] },
      { cpu: '500m', memory: '1024Mi', pods: '1' },
    ],
    ['containers add up', { containers: [c('500m'), c('1500m')] }, { cpu: '2', pods: '1' }],
    [
      'a larger init container wins over the containers',
      { containers: [c('500m')], initContainers: [c('3')] },
      { cpu: '3', pods: '1' },
    ],
    [
      'a smaller init container does not add',
      { containers: [c('2')], initContainers: [c('1')] },
      { cpu: '2', pods: '1' },
    ],
    [
      'a sidecar (restartable init container) adds to the containers',
      { containers: [c('1')], initContainers: [c('250m', undefined, 'Always')] },
      { cpu: '1250m', pods: '1' },
    ],
    [
      'an init container after a sidecar runs beside it',
      { containers: [c('100m')], initContainers: [c('500m', undefined, 'Always'), c('2')] },
      { cpu: '2500m', pods: '1' },
    ],
    [
      'an init container before a sidecar runs alone',
      { containers: [c('100m')], initContainers: [c('2'), c('500m', undefined, 'Always')] },
      { cpu: '2', pods: '1' },
    ],
    [
      'overhead adds on top',
      { containers: [c('1', '1Gi')], overhead: { cpu: '250m', memory: '120Mi' } },
      { cpu: '1250m', memory: '1144Mi', pods: '1' },
    ],
    [
      'a limit without a request counts as the request',
      { containers: [{ resources: { limits: { cpu: '2', memory: '1Gi' } } }] },
      { cpu: '2', memory: '1024Mi', pods: '1' },
    ],
    [
      'extended resources are kept',
      { containers: [{ resources: { requests: { 'nvidia.com/gpu': '1' } } }] },
      { 'nvidia.com/gpu': '1', pods: '1' },
    ],
  ])('%s', (_name, spec, expected) => {
    const parsed = podRequests(spec);
    if ('error' in parsed) throw new Error(parsed.error);
    expect(toResourceList(parsed.resources)).toEqual(expected);
  });

  it.each<[string, SchedulingPodSpec, RegExp]>([
    [
      'a malformed request',
      { containers: [c('two')] },
      /container 0 request cpu: "two" is not a valid quantity/,
    ],
    ['a negative request', { containers: [c('-1')] }, /not a non-negative quantity/],
    ['a malformed overhead', { containers: [c('1')], overhead: { memory: '1 Gi' } }, /overhead memory/],
  ])('%s is an error naming the field', (_name, spec, message) => {
    const parsed = podRequests(spec);
    expect('error' in parsed && parsed.error).toMatch(message);
  });
});
