import type { ReactNode } from 'react';
import { Icon, type IconName } from './icons';
import { ExitCapsule, StatusDot, isInFlight, type CallState } from './status';

/** The props of [`ToolRowChrome`]. */
export interface ToolRowChromeProps {
  /** The call's state: its dot, and the shimmer while in flight. */
  state: CallState;
  /** The tool's icon. */
  icon: IconName;
  /** The row's title: the tool's own title, or "Tool call · name" for the generic row. */
  title: string;
  /** What the call is about (a path, a command, a pattern), cut with an ellipsis when long. */
  summary?: string;
  /** Small facts after the summary (± counts, a number of files). */
  suffix?: ReactNode;
  /** The neutral capsule of a command that ended badly; the text makes room for it. */
  capsule?: string;
  /** Whether the details are shown; absent for a row that cannot expand. */
  expanded?: boolean;
  /** Toggles the details; a row without it cannot expand. */
  onToggle?: () => void;
  /** The id of the details region the toggle controls. */
  detailsId?: string;
  /** A quiet mark after the text, outside the toggle (how review judged the call). */
  mark?: ReactNode;
  /** Buttons beside the row (open the file, inspect the call), outside the toggle. */
  actions?: ReactNode;
}

/**
 * The one row every tool call has: state dot, icon, title · summary, suffix and capsule.
 * While the call is in flight one highlight sweeps left to right across the title,
 * separator, summary and suffix together; a finished row is still, and so is every row
 * under `prefers-reduced-motion`.
 */
export function ToolRowChrome(props: ToolRowChromeProps) {
  const { state, icon, title, summary, suffix, capsule, expanded, onToggle, detailsId } = props;
  const { mark, actions } = props;
  const body = (
    <>
      {onToggle !== undefined && (
        <span
          className="qp-row__chevron"
          data-open={expanded ? 'true' : 'false'}
          aria-hidden="true"
        />
      )}
      <StatusDot state={state} />
      <Icon name={icon} className="qp-row__icon" />
      <span className="qp-row__text">
        <span className="qp-row__title">{title}</span>
        {summary !== undefined && summary !== '' && (
          <>
            <span className="qp-row__sep" aria-hidden="true">
              {' · '}
            </span>
            <span className="qp-row__summary">{summary}</span>
          </>
        )}
        {suffix !== undefined && <span className="qp-row__suffix">{suffix}</span>}
      </span>
      {capsule !== undefined && <ExitCapsule label={capsule} />}
    </>
  );
  return (
    <div className={isInFlight(state) ? 'qp-row qp-row--running' : 'qp-row'} data-state={state}>
      {onToggle === undefined ? (
        <div className="qp-row__main">{body}</div>
      ) : (
        <button
          type="button"
          className="qp-row__main qp-row__main--toggle"
          aria-expanded={expanded === true}
          aria-controls={detailsId}
          onClick={onToggle}
        >
          {body}
        </button>
      )}
      {mark}
      {actions !== undefined && <div className="qp-row__actions">{actions}</div>}
    </div>
  );
}

/** A small text button beside a row or in a card (open a file, inspect a call). */
export function RowAction(props: { label: string; onClick: () => void; children: ReactNode }) {
  return (
    <button
      type="button"
      className="qp-action"
      aria-label={props.label}
      title={props.label}
      onClick={props.onClick}
    >
      {props.children}
    </button>
  );
}
