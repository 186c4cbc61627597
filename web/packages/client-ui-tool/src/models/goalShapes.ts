// The wire shapes of issue 29 (checks and goals), typed by hand from the agreed shapes until the
// runtime branches' protocol commits land; then the generated types replace this file.

/** How a check run ended as a process. */
export type CheckStatus = 'completed' | 'timed_out' | 'failed_to_start';
/** What a check run concluded. */
export type CheckConclusion = 'success' | 'failure' | 'neutral';
/** How serious an annotation is. */
export type AnnotationLevel = 'error' | 'warning' | 'notice';

/** One finding a check's parser read from its output. */
export interface CheckAnnotation {
  path: string;
  line?: number | null;
  column?: number | null;
  level: AnnotationLevel;
  message: string;
}

/** A spilled output: where the whole text is, and its size. */
export interface SpillFile {
  path: string;
  totalBytes: number;
}

/** One check's run. */
export interface CheckRun {
  id: string;
  description?: string | null;
  command: string;
  status: CheckStatus;
  conclusion: CheckConclusion;
  durationMs: number;
  summary: string;
  annotations: CheckAnnotation[];
  omittedAnnotations: number;
  output: string;
  spill?: SpillFile | null;
  cached: boolean;
  startedAt: string;
  exitCode?: number | null;
}

/** What `checks_run` returns. */
export interface ChecksRunOutput {
  runs: CheckRun[];
  conclusion: CheckConclusion;
  summary: string;
}

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
