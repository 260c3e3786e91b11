// Which Capacity Reservation Groups the app may launch into, read from the CAPACITY_RESERVATION_GROUP_IDS
// setting: parsing and validating the ARM IDs, and the label-safe name each reservation is known by on
// NodeClaims and Nodes. Pure: strings in, plain data out.
import { createHash } from 'node:crypto';

/** One Capacity Reservation Group named by the setting. */
export interface CapacityReservationGroupRef {
  /** The ARM ID as the VM PUT names it (`capacityReservation.capacityReservationGroup.id`). */
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

const GROUP_ID =
  /^\/subscriptions\/([0-9a-fA-F-]{36})\/resourceGroups\/([-\w.()]{1,90})\/providers\/Microsoft\.Compute\/capacityReservationGroups\/([-\w.]{1,80})$/i;

/**
 * The groups of a comma-separated list of ARM IDs, or the problems that make the list unusable (each
 * naming the setting and the entry). A group named twice, or two groups of the same name in different
 * resource groups, are refused: a reservation's label value starts with the group's name, so the names
 * must tell the groups apart.
 */
export function parseCapacityReservationGroupIds(
  setting: string,
  raw: string | undefined,
): { groups: CapacityReservationGroupRef[]; problems: string[] } {
  const groups: CapacityReservationGroupRef[] = [];
  const problems: string[] = [];
  for (const entry of (raw ?? '').split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const match = GROUP_ID.exec(entry);
    if (!match) {
      problems.push(
        `${setting} has ${JSON.stringify(entry)}: expected /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Compute/capacityReservationGroups/<name>`,
      );
      continue;
    }
    const [, subscriptionId = '', resourceGroup = '', name = ''] = match;
    if (groups.some((g) => g.name.toLowerCase() === name.toLowerCase())) {
      problems.push(`${setting} names capacity reservation group "${name}" twice: group names must differ`);
      continue;
    }
    groups.push({ id: entry, subscriptionId, resourceGroup, name });
  }
  return { groups, problems };
}

const LABEL_VALUE_MAX = 63;
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * The reservation ID a reserved offering carries in its requirements and a node in the label
 * karpenter.azure.com/capacity-reservation-id: "<group>.<reservation>" (both Azure names are letters,
 * digits, `_`, `-` and `.`, so the pair is a label value), shortened with a hash of the whole when it
 * exceeds the 63 characters a label value may have, and in lower case, since Azure's names are
 * case-insensitive and the label must not change when Azure changes a name's case.
 */
export function reservationIdOf(groupName: string, reservationName: string): string {
  const whole = `${groupName}.${reservationName}`.toLowerCase();
  if (whole.length <= LABEL_VALUE_MAX && LABEL_VALUE.test(whole)) return whole;
  const digest = createHash('sha256').update(whole).digest('hex').slice(0, 10);
  const head = whole
    .slice(0, LABEL_VALUE_MAX - digest.length - 1)
    .replace(/[^a-z0-9]+$/, '')
    .replace(/^[^a-z0-9]+/, '');
  return head ? `${head}-${digest}` : digest;
}
