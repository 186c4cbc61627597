// The wire shapes of goals (issue 29), typed by hand from the agreed shapes until the goals
// branch's protocol commit lands; then the generated types replace this file. The checks'
// shapes are the generated ones already.
import type { ChecksRunOutput } from '@qilin-agent/protocol';

/** Where a goal stands. */
export type GoalStatus =
  'active' | 'paused' | 'blocked' | 'budget_limited' | 'complete' | 'cleared';
/** Why a paused goal is paused. */
export type PauseCause = 'user' | 'stalled' | 'restart';
/** Who made a change to a goal. */
export type GoalActor = 'model' | 'user' | 'runtime';

/** A goal's limits. */
export interface GoalBudget {
  tokens?: number | null;
  seconds?: number | null;
  turns?: number | null;
}

/** What a goal has spent. */
export interface GoalUsage {
  tokens: number;
  seconds: number;
  turns: number;
}

/** A goal as the runtime records it. */
export interface GoalRecord {
  id: string;
  objective: string;
  status: GoalStatus;
  pausedBecause?: PauseCause | null;
  budget: GoalBudget;
  usage: GoalUsage;
  checks: string[];
  lastChecks?: ChecksRunOutput | null;
  reason?: string | null;
  evidence?: string | null;
  createdAt: string;
  updatedAt: string;
}
