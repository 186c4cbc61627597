import type { SlotContext } from '@qilin-agent/slots';
import { TOOL_VIEW_SLOT } from './slots';
import {
  AgentListView,
  AgentSendView,
  AgentStopView,
  AgentView,
  AgentWaitView,
} from './views/agents';
import { ChecksRunView } from './views/checks';
import { EditView } from './views/edit';
import { EditorView } from './views/editor';
import { GlobView } from './views/glob';
import { GoalCreateView, GoalGetView, GoalUpdateView } from './views/goals';
import { InterruptView } from './views/interrupt';
import { ScheduleCreateView, ScheduleDeleteView, ScheduleListView } from './views/schedules';
import { JobOutputView } from './views/jobOutput';
import { LspView } from './views/lsp';
import { LoopStartView, LoopStatusView, LoopStopView } from './views/loops';
import { WorkflowRunView, WorkflowStatusView, WorkflowStopView } from './views/workflows';
import { TaskCreateView, TaskListView, TaskUpdateView } from './views/tasks';
import { GrepView } from './views/grep';
import { QuestionView } from './views/question';
import { ReadView } from './views/read';
import { ReadImageView } from './views/readImage';
import { RunCodeView } from './views/runCode';
import { SessionEventsView } from './views/sessionEvents';
import { SessionSearchView } from './views/sessionSearch';
import { SessionTrajectoryView } from './views/sessionTrajectory';
import { ShellView } from './views/shell';
import { TerminalView } from './views/terminal';
import { TableQueryView } from './views/tableQuery';
import { TerminalListView } from './views/terminalList';
import { TodoView } from './views/todo';
import { WebFetchView } from './views/webFetch';
import { WriteView } from './views/write';

/** The built-in views by wire tool name. */
export const BUILTIN_TOOL_VIEWS = {
  bash: ShellView,
  pwsh: ShellView,
  job_output: JobOutputView,
  job_kill: InterruptView,
  terminal_start: TerminalView,
  terminal_send: TerminalView,
  terminal_kill: InterruptView,
  terminal_list: TerminalListView,
  table_query: TableQueryView,
  read: ReadView,
  read_image: ReadImageView,
  write: WriteView,
  edit: EditView,
  str_replace_editor: EditorView,
  grep: GrepView,
  glob: GlobView,
  web_fetch: WebFetchView,
  todo_write: TodoView,
  question: QuestionView,
  run_code: RunCodeView,
  session_search: SessionSearchView,
  session_events: SessionEventsView,
  session_trajectory: SessionTrajectoryView,
  agent: AgentView,
  agent_wait: AgentWaitView,
  agent_list: AgentListView,
  agent_stop: AgentStopView,
  agent_send: AgentSendView,
  checks_run: ChecksRunView,
  goal_create: GoalCreateView,
  goal_get: GoalGetView,
  goal_update: GoalUpdateView,
  schedule_create: ScheduleCreateView,
  schedule_list: ScheduleListView,
  schedule_delete: ScheduleDeleteView,
  task_create: TaskCreateView,
  task_update: TaskUpdateView,
  task_list: TaskListView,
  lsp: LspView,
  loop_start: LoopStartView,
  loop_status: LoopStatusView,
  loop_stop: LoopStopView,
  workflow_run: WorkflowRunView,
  workflow_status: WorkflowStatusView,
  workflow_stop: WorkflowStopView,
} as const;

/**
 * Registers the built-in views in `tool.call.toolview` of `ctx.slots`, as any business
 * package registers its own; returns the function that removes them.
 */
export function registerBuiltinToolViews(ctx: SlotContext): () => void {
  return ctx.slots.inject(TOOL_VIEW_SLOT, () => {
    const disposers = Object.entries(BUILTIN_TOOL_VIEWS).map(([key, view]) =>
      ctx.slots.register({ name: TOOL_VIEW_SLOT, key }, view),
    );
    return () => disposers.forEach((dispose) => dispose());
  });
}
