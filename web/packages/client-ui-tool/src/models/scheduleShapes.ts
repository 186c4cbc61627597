// The wire shapes of the scheduled-task tools and events (issue 31), typed by hand from the agreed
// contract until the runtime branch's generated protocol types land in `@qilin-agent/protocol`;
// replace these with the generated ones then.

/** Where a schedule's runs happen. */
export type ScheduleTarget = 'this_session' | 'new_session';

/** What a schedule does with fires missed while no server ran. */
export type CatchUp = 'once' | 'skip';

/** A schedule's state. `done`: a one-shot `at` that fired. */
export type ScheduleStatus = 'active' | 'done' | 'expired' | 'deleted';

/** How one run of a schedule went. */
export type RunOutcome =
  'running' | 'completed' | 'failed' | 'interrupted' | 'out_of_budget' | 'skipped';
