import { useT } from '@qilin-agent/i18n';

/**
 * What a call's row shows about its life: in flight, or how it ended. `receipt` is a call
 * whose result only acknowledges what was asked (a job started, an interrupt requested): its
 * row shows no execution state at all.
 */
export type CallState =
  'preparing' | 'running' | 'waiting' | 'ok' | 'error' | 'denied' | 'interrupted' | 'receipt';

/** True for a call still in flight (its row shimmers); a call waiting for a person is still. */
export function isInFlight(state: CallState): boolean {
  return state === 'preparing' || state === 'running';
}

/**
 * A small dot in the state's static colour, named for assistive technology; a receipt keeps
 * the dot's room empty and says nothing.
 */
export function StatusDot(props: { state: CallState }) {
  const t = useT();
  if (props.state === 'receipt')
    return <span className="qp-dot qp-dot--receipt" aria-hidden="true" />;
  return (
    <span
      className={`qp-dot qp-dot--${props.state}`}
      role="img"
      aria-label={t(`status.${props.state}`)}
    />
  );
}

/**
 * The neutral capsule of a command that ended badly (a non-zero exit, a signal, no exit code):
 * the words in the text colour, the alarm only in its red dot.
 */
export function ExitCapsule(props: { label: string }) {
  return (
    <span className="qp-capsule">
      <span className="qp-capsule__dot" aria-hidden="true" />
      {props.label}
    </span>
  );
}
