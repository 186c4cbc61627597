// The agent family's cards: `agent`, `agent_wait`, `agent_list`, `agent_stop`, `agent_send`.
import { useLocale, useT } from '@qilin-agent/i18n';
import {
  agentListModel,
  agentModel,
  agentSendModel,
  agentStopModel,
  agentWaitModel,
  childAlive,
  childDot,
  formatCost,
  formatTokens,
  type ChildRow,
  type ChildState,
} from '../models/agents';
import { formatDuration } from '../models/sessionLink';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, TextBlock, ToolRow } from './card';
import { ChildCalls } from './childCalls';
import { Generic, hostOf, useModel } from './shared';

/** A child's status: a dot in its static colour and the word. */
export function ChildStatus(props: { status: ChildState }) {
  const t = useT();
  return (
    <span className="qt-child-status" data-status={props.status}>
      <span className={`qp-dot qp-dot--${childDot(props.status)}`} aria-hidden="true" />
      {t(`agents.status.${props.status}`)}
    </span>
  );
}

/** A child's tokens in and out, in the viewer's numbers. */
function Tokens(props: { child: Pick<ChildRow, 'inputTokens' | 'outputTokens'> }) {
  const t = useT();
  const locale = useLocale();
  return (
    <>
      {t('agents.tokens', {
        input: formatTokens(props.child.inputTokens, locale),
        output: formatTokens(props.child.outputTokens, locale),
      })}
    </>
  );
}

/** A child's short record: status, steps, tokens, cost and duration. */
function ChildFacts(props: { child: ChildRow; label: string; withAgent?: boolean }) {
  const t = useT();
  const locale = useLocale();
  const { child } = props;
  return (
    <dl className="qt-receipt qt-child-facts" aria-label={props.label}>
      {props.withAgent === true && (
        <>
          <dt>{t('agents.agent')}</dt>
          <dd>
            <code>{child.agent}</code>
            {child.name === undefined ? null : ` · ${child.name}`}
          </dd>
        </>
      )}
      <dt>{t('agents.status')}</dt>
      <dd>
        <ChildStatus status={child.status} />
      </dd>
      <dt>{t('agents.steps')}</dt>
      <dd>{child.steps}</dd>
      <dt>{t('agents.tokensLabel')}</dt>
      <dd>
        <Tokens child={child} />
      </dd>
      {child.costUsd !== undefined && (
        <>
          <dt>{t('agents.cost')}</dt>
          <dd>{formatCost(child.costUsd, locale)}</dd>
        </>
      )}
      <dt>{t('agents.duration')}</dt>
      <dd>{formatDuration(child.durationMs, locale)}</dd>
    </dl>
  );
}

/** What a child ended with: its answer, or what stopped it. */
function ChildOutcome(props: { child: ChildRow }) {
  const t = useT();
  const { child } = props;
  return (
    <>
      {child.error !== undefined && <TextBlock label={t('agents.error')} text={child.error} />}
      {child.answer !== undefined ? (
        <TextBlock label={t('agents.answer')} text={child.answer} />
      ) : !childAlive(child.status) && child.error === undefined ? (
        <p className="qp-caption">{t('agents.noAnswer')}</p>
      ) : null}
    </>
  );
}

/** The link that opens a child session in the page. */
function ChildLink(props: { href: string; name?: string | undefined }) {
  const t = useT();
  return (
    <a className="qt-child-link" href={props.href}>
      {props.name === undefined ? t('agents.open') : t('agents.openNamed', { name: props.name })}
    </a>
  );
}

/**
 * `agent`: the child's description, agent and foreground or background on the row; its calls as
 * they happen (through the host's child feed), its answer and a short record once it ended, and
 * a link that opens the child session. A background start is a receipt.
 */
export function AgentView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, agentModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.agent.title');
  const host = hostOf(props);
  const mode =
    model.background === undefined
      ? undefined
      : t(model.background ? 'agents.background' : 'agents.foreground');
  return (
    <>
      <ToolRow
        callId={props.callId}
        host={host}
        state={model.state}
        icon="agent"
        title={title}
        summary={model.description}
        // Plain text: the row's own suffix colour, still or sweeping.
        suffix={
          model.agent === undefined
            ? undefined
            : [model.agent, model.name, mode].filter((part) => part !== undefined).join(' · ')
        }
        capsule={model.capsule === undefined ? undefined : t(model.capsule)}
      >
        {model.kind === 'agent' && props.phase !== 'preparing' && (
          <>
            {model.href !== undefined && <ChildLink href={model.href} name={model.name} />}
            {model.record !== undefined && (
              <ChildFacts
                child={model.record}
                label={t('agents.record', { title: model.description ?? title })}
              />
            )}
            {model.background === true && model.record !== undefined && (
              <p className="qt-verdict">
                {model.name === undefined
                  ? t('agents.startedBackground')
                  : t('agents.startedTeammate', { name: model.name })}
              </p>
            )}
            {model.prompt !== undefined && model.body === undefined && (
              <TextBlock label={t('agents.prompt')} text={model.prompt} />
            )}
            {model.record !== undefined && !model.background && (
              <ChildOutcome child={model.record} />
            )}
            {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
          </>
        )}
      </ToolRow>
      {model.childSessionId !== undefined && (
        <ChildCalls
          sessionId={model.childSessionId}
          running={props.phase === 'start'}
          title={model.description ?? title}
          host={host}
        />
      )}
    </>
  );
}

/** `agent_wait`: the children that finished with their answers, the ones still running. */
export function AgentWaitView(props: ToolCallOwnerProps) {
  const t = useT();
  const locale = useLocale();
  const model = useModel(props, agentWaitModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.agent_wait.title');
  const asked = model.ids === undefined ? t('agents.wait.all') : model.ids.join(', ');
  const summary =
    props.phase === 'preparing'
      ? undefined
      : model.timeoutMs === undefined
        ? asked
        : `${asked} · ${t('agents.wait.bound', { duration: formatDuration(model.timeoutMs, locale) })}`;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="agent"
      title={title}
      summary={summary}
      suffix={model.suffix === undefined ? undefined : t(model.suffix)}
    >
      {model.finished !== undefined && (
        <section className="qt-block">
          <h4 className="qt-block__label">{t('agents.wait.finished')}</h4>
          {model.finished.length === 0 ? (
            <p className="qp-caption">{t('agents.wait.none')}</p>
          ) : (
            <ol className="qt-children">
              {model.finished.map((child) => (
                <li key={child.sessionId} className="qt-child">
                  <a className="qt-child__title" href={child.href}>
                    {child.name ?? child.description}
                  </a>
                  <ChildFacts
                    child={child}
                    label={t('agents.record', { title: child.name ?? child.description })}
                    withAgent
                  />
                  <ChildOutcome child={child} />
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
      {model.running !== undefined && model.running.length > 0 && (
        <section className="qt-block">
          <h4 className="qt-block__label">{t('agents.wait.running')}</h4>
          <ul className="qt-children">
            {model.running.map((child) => (
              <li key={child.sessionId}>
                <a href={child.href}>
                  <code>{child.sessionId}</code>
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
      {model.timedOut === true && <p className="qt-verdict">{t('agents.wait.timedOut')}</p>}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `agent_list`: the session's children as a small table. */
export function AgentListView(props: ToolCallOwnerProps) {
  const t = useT();
  const locale = useLocale();
  const model = useModel(props, agentListModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.agent_list.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="agent"
      title={title}
      summary={model.suffix === undefined ? undefined : t(model.suffix)}
    >
      {model.children !== undefined &&
        (model.children.length === 0 ? (
          <p className="qp-caption">{t('agents.list.none')}</p>
        ) : (
          <table className="qt-table">
            <caption>{t('agents.list.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('agents.list.name')}</th>
                <th scope="col">{t('agents.agent')}</th>
                <th scope="col">{t('agents.status')}</th>
                <th scope="col">{t('agents.steps')}</th>
                <th scope="col">{t('agents.tokensLabel')}</th>
              </tr>
            </thead>
            <tbody>
              {model.children.map((child) => (
                <tr key={child.sessionId} data-status={child.status}>
                  <td>
                    <a href={child.href}>{child.name ?? child.description}</a>
                    {child.name === undefined ? null : (
                      <span className="qp-caption"> · {child.description}</span>
                    )}
                  </td>
                  <td>
                    <code>{child.agent}</code>
                  </td>
                  <td>
                    <ChildStatus status={child.status} />
                  </td>
                  <td>{child.steps}</td>
                  <td>{formatTokens(child.inputTokens + child.outputTokens, locale)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `agent_stop`: the receipt of an interrupt request, and nothing more. */
export function AgentStopView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, agentStopModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.agent_stop.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="agent"
      title={title}
      summary={model.target}
    >
      {model.confirmation !== undefined && (
        <p className="qt-verdict">
          {t(model.confirmation)}
          {model.endedAs !== undefined && (
            <>
              {' '}
              <ChildStatus status={model.endedAs} />
            </>
          )}
        </p>
      )}
      {model.href !== undefined && <ChildLink href={model.href} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `agent_send`: to whom, the message, delivered now or queued. */
export function AgentSendView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, agentSendModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.agent_send.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="agent"
      title={title}
      summary={model.to}
      suffix={model.delivered === undefined ? undefined : t(`agents.send.${model.delivered}`)}
    >
      {model.delivered !== undefined && (
        <p className="qt-verdict">
          {t(model.delivered === 'now' ? 'agents.send.nowNote' : 'agents.send.queuedNote')}
        </p>
      )}
      {model.message !== undefined && model.body === undefined && (
        <TextBlock label={t('agents.send.message')} text={model.message} />
      )}
      {model.href !== undefined && <ChildLink href={model.href} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
