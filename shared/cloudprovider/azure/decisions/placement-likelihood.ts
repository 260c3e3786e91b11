// How Azure's placement scores steer a launch: among equally priced offerings the more likely zone
// is tried first, and an offering Azure scores Low (or restricts) is tried only after every other
// candidate, so a dearer size wins only over a cheaper one Azure says is unlikely. Spot offerings take
// the spot scores, on-demand ones the regular scores. An offering without a score (reserved, regional, a
// size Azure did not score, no answer) ranks between Medium and Low: no score is no verdict, and the
// failure memory stays the ground truth.
import type { Offering } from '../../../decisions/offerings.js';
import {
  scoreKey,
  scoredPriorityOf,
  type PlacementScore,
  type PlacementScores,
} from '../../../azure/placement-scores.js';

/** The score of a zonal spot or on-demand offering; undefined for any other or when Azure gave none. */
export function scoreOf(scores: PlacementScores, offering: Offering): PlacementScore | undefined {
  const priority = scoredPriorityOf(offering.capacityType);
  if (!offering.zoneNumber || !priority) return undefined;
  return scores.get(scoreKey(priority, offering.vmSize, offering.zoneNumber));
}

const RANK: Record<PlacementScore | 'none', number> = {
  High: 0,
  Medium: 1,
  DataNotFoundOrStale: 2,
  none: 2,
  Low: 3,
  RestrictedSKU: 4,
};

/** Lower is more likely to be allocated. */
export function likelihoodRank(score: PlacementScore | undefined): number {
  return RANK[score ?? 'none'];
}

/** Azure says an allocation is unlikely now. */
export function isUnlikely(score: PlacementScore | undefined): boolean {
  return score === 'Low' || score === 'RestrictedSKU';
}
