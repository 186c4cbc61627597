/**
 * Qilin's tool-call display: `ToolCallTree` renders one root call and its nested calls,
 * each through the keyed slot `tool.call.toolview` by wire tool name, with the built-in
 * views of Qilin's tools (`registerBuiltinToolViews`), the generic card as the fallback and
 * the denial card first (with "Allow this call" for a call the reviewer model refused) and a
 * quiet mark on a call review let run. Card models are pure functions of the raw event fields.
 */
import './slots';

export {
  ANY_TOOL,
  IMAGES_SLOT,
  REQUESTS_SLOT,
  TOOL_VIEW_SLOT,
  type PreparingToolCallViewProps,
  type ResultBlock,
  type StartBlock,
  type StartedToolCallViewProps,
  type ToolCallHooks,
  type FileLines,
  type ToolCallHost,
  type ToolCallImagesProps,
  type ToolCallRequestsProps,
  type ToolCallShared,
  type ToolCallOwnerProps,
  type ChildFeedStatus,
  type ChildSessionFeed,
  type UseChildSession,
  type UseLoop,
} from './slots';
export { ToolCallTree, type ToolCallTreeProps } from './tree/ToolCallTree';
export { createLoopHook, createToolCallHooks, previousCall } from './tree/hooks';
export { BUILTIN_TOOL_VIEWS, registerBuiltinToolViews } from './register';
export { shortenPath } from './paths';
export {
  GenericCard,
  PlainDetails,
  TextBlock,
  ToolRow,
  useToolHooks,
  type ToolRowProps,
} from './views/card';
export { GenericToolView } from './views/generic';
export { PreparingRow } from './views/shared';
export { RequestNotes } from './views/request';
export { ReviewMark, ReviewMarkContext, useReviewMark } from './views/review';
export {
  Fields,
  Unsupported,
  asRecord,
  callState,
  cardInput,
  clip,
  firstLine,
  flattenArguments,
  flattenContent,
  isAutoReviewDenied,
  isReviewRefusal,
  summariseArguments,
  type CardInput,
} from './models/common';
export { genericModel, type GenericModel } from './models/generic';
export { deniedModel, normaliseReason, type DeniedModel, type Refusal } from './models/denied';
export { reviewMark, type MarkedCall, type ReviewMarkModel } from './models/review';
export { plainBody, type PlainBody } from './models/outcome';
export { shellModel, type ShellBody, type ShellModel } from './models/shell';
export {
  PROGRAM_STATES,
  programCapsule,
  terminalListModel,
  terminalModel,
  typedLine,
  type ListedShell,
  type ListedTerminal,
  type ProgramState,
  type TerminalBody,
  type TerminalListModel,
  type TerminalModel,
} from './models/terminal';
export {
  interruptModel,
  jobOutputModel,
  type InterruptModel,
  type JobOutputModel,
} from './models/job';
export { numberedLines, readModel, type ExcerptBody, type ReadModel } from './models/read';
export { imageModel, type ImageModel } from './models/image';
export {
  editModel,
  editorModel,
  preparingSize,
  writeModel,
  type DiffBody,
  type DiffModel,
} from './models/diff';
export { globModel, grepModel, type SearchModel } from './models/search';
export { webModel, type WebModel } from './models/web';
export {
  compareTodos,
  todoItems,
  todoModel,
  type TodoItem,
  type TodoModel,
  type TodoRow,
} from './models/todo';
export { questionModel, type QuestionModel, type QuestionRow } from './models/question';
export { runCodeModel, type RunCodeModel } from './models/runCode';
export {
  formatDuration,
  formatTime,
  parsePlace,
  placeOf,
  sessionHref,
  snippetParts,
  type SessionPlace,
  type SnippetPart,
} from './models/sessionLink';
export {
  HIT_FIELDS,
  hitRow,
  sessionSearchModel,
  type HitField,
  type SessionHitRow,
  type SessionSearchModel,
} from './models/sessionSearch';
export {
  sessionEventsModel,
  type SessionEventRow,
  type SessionEventsModel,
} from './models/sessionEvents';
export {
  TRAJECTORY_KINDS,
  nestByDepth,
  sessionTrajectoryModel,
  type SessionTrajectoryModel,
  type TrajectoryKind,
  type TrajectoryRow,
} from './models/sessionTrajectory';
export { RecordedTime, Snippet } from './views/sessionParts';
export {
  CHILD_STATUSES,
  DELIVERIES,
  agentListModel,
  agentModel,
  agentSendModel,
  agentStopModel,
  agentWaitModel,
  childAlive,
  childDot,
  childRow,
  formatCost,
  formatTokens,
  type AgentListModel,
  type AgentModel,
  type AgentSendModel,
  type AgentStopModel,
  type AgentWaitModel,
  type ChildRow,
  type ChildDot,
  type ChildState,
} from './models/agents';
export {
  ChildCalls,
  LATEST_CHILD_CALLS,
  rootCalls,
  type ChildCallsProps,
} from './views/childCalls';
export {
  ANNOTATION_LEVELS,
  CHECK_CONCLUSIONS,
  CHECK_STATUSES,
  checkRow,
  checksReceipt,
  checksRunModel,
  overallConclusion,
  type AnnotationRow,
  type CheckRow,
  type ChecksReceipt,
  type ChecksRunModel,
} from './models/checks';
export {
  GOAL_STATUSES,
  PAUSE_CAUSES,
  goalCreateModel,
  goalDot,
  goalGetModel,
  goalRow,
  goalUpdateModel,
  leftOf,
  type GoalCreateModel,
  type GoalGetModel,
  type GoalMeasure,
  type GoalRow,
  type GoalUpdateModel,
} from './models/goals';
export { CheckConclusionMark, ChecksReceiptList } from './views/checks';
export { GoalMeters, GoalStatusBadge } from './views/goals';
export {
  RUN_OUTCOMES,
  SCHEDULE_STATUSES,
  runDot,
  runRow,
  scheduleCreateModel,
  scheduleDeleteModel,
  scheduleDot,
  scheduleListModel,
  scheduleRow,
  viewerTimeZone,
  type RunRow,
  type ScheduleCreateModel,
  type ScheduleDeleteModel,
  type ScheduleListModel,
  type ScheduleRow,
  type ScheduleWhen,
} from './models/schedules';
export {
  FireTime,
  RunReceipt,
  ScheduleDetails,
  ScheduleStatusBadge,
  ScheduleTable,
} from './views/schedules';
export {
  TASK_STATUSES,
  compareTasks,
  taskCreateModel,
  taskDot,
  taskListModel,
  taskRow,
  taskRows,
  taskUpdateModel,
  type AssigneeChange,
  type StatusChange,
  type TaskCreateModel,
  type TaskListModel,
  type TaskListRow,
  type TaskMark,
  type TaskNoteRow,
  type TaskRow,
  type TaskState,
  type TaskUpdateModel,
} from './models/tasks';
export { TaskStatusBadge } from './views/tasks';
export {
  LSP_EMPTY_REASONS,
  LSP_OPERATIONS,
  LSP_SEVERITIES,
  LSP_SYMBOL_KINDS,
  bySeverity,
  countSeverities,
  editDiagnostics,
  groupRows,
  lspModel,
  lspResult,
  lspRow,
  lspSuffix,
  nestSymbols,
  placeLabel,
  rowLines,
  type EditDiagnosticsRow,
  type LspEmptyRow,
  type LspGroup,
  type LspModel,
  type LspResultRow,
  type LspRow,
  type LspSymbolKind,
  type LspSymbolNode,
  type SeverityCounts,
} from './models/lsp';
export { EditDiagnosticsBlock, EditDiagnosticsMark, LspView, SeverityMark } from './views/lsp';
export {
  FILE_CHANGE_KINDS,
  ITERATION_STATES,
  LOOP_STATES,
  LOOP_STOP_REASONS,
  LoopBook,
  changedLines,
  currentIteration,
  iterationDot,
  iterationRow,
  laterIteration,
  laterLoop,
  loopOfEvent,
  loopRow,
  loopStartModel,
  loopStatusModel,
  loopStopModel,
  stopDot,
  withIteration,
  type FileChangeKind,
  type FileChangeRow,
  type IterationCheckRow,
  type IterationRow,
  type IterationState,
  type LoopBudgetRow,
  type LoopEvent,
  type LoopRow,
  type LoopStartModel,
  type LoopState,
  type LoopStatusModel,
  type LoopStopModel,
  type LoopStopReason,
} from './models/loops';
export { LoopIterations, LoopStopBadge, LoopVerdict } from './views/loops';
export {
  STEP_STATES,
  WORKFLOW_STATES,
  stepDot,
  stepRow,
  workflowDot,
  workflowRow,
  workflowRunModel,
  workflowStatusModel,
  workflowStopModel,
  type StepRow,
  type StepState,
  type WorkflowRow,
  type WorkflowRunModel,
  type WorkflowState,
  type WorkflowStatusModel,
  type WorkflowStopModel,
} from './models/workflows';
export { WorkflowStatusBadge } from './views/workflows';
