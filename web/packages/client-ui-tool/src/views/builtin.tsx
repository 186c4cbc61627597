import { useT } from '@qilin-agent/i18n';
import { useSlotView } from '@qilin-agent/slots';
import {
  DiffStats,
  DiffView,
  FileExcerpt,
  ImageGallery,
  SearchResults,
  TerminalOutput,
  ToolRowChrome,
  WebPageSummary,
  type IconName,
} from '@qilin-agent/ui-primitives';
import { useMemo } from 'react';
import { cardInput } from '../models/common';
import {
  editModel,
  editorModel,
  preparingSize,
  touchedLines,
  writeModel,
  type DiffModel,
} from '../models/diff';
import { genericModel, type GenericModel } from '../models/generic';
import { imageModel } from '../models/image';
import { questionModel } from '../models/question';
import { readModel, type ReadModel } from '../models/read';
import { runCodeModel } from '../models/runCode';
import { globModel, grepModel, type SearchModel } from '../models/search';
import { shellModel } from '../models/shell';
import { todoModel } from '../models/todo';
import { webModel } from '../models/web';
import {
  IMAGES_SLOT,
  type PreparingToolCallViewProps,
  type ToolCallHost,
  type ToolCallViewProps,
} from '../slots';
import { GenericCard, PlainDetails, TextBlock, ToolCard, useToolHooks } from './card';

/** The host part of a view's props. */
function hostOf(props: ToolCallViewProps): ToolCallHost {
  return {
    loadImage: props.loadImage,
    ...(props.cwd === undefined ? {} : { cwd: props.cwd }),
    ...(props.home === undefined ? {} : { home: props.home }),
    ...(props.openFile === undefined ? {} : { openFile: props.openFile }),
    ...(props.inspect === undefined ? {} : { inspect: props.inspect }),
  };
}

/** A card model of the view's props, computed once per change of the props. */
function useModel<M>(
  props: ToolCallViewProps,
  build: (input: ReturnType<typeof cardInput>) => M,
): M {
  // The props object is rebuilt by the tree only when the call's data changed.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => build(cardInput(props)), [props]);
}

function Generic(props: { view: ToolCallViewProps; model: GenericModel }) {
  return <GenericCard model={props.model} callId={props.view.callId} host={hostOf(props.view)} />;
}

/** The view for a tool with no view of its own: the generic card, with the tool's recorded header. */
export function GenericToolView(props: ToolCallViewProps) {
  const model = useModel(props, (input) =>
    genericModel(input, props.phase === 'preparing' ? undefined : props.start.presentation),
  );
  return <Generic view={props} model={model} />;
}

/** `bash` and `pwsh`: the terminal card. */
export function ShellView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, shellModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t(props.toolName === 'pwsh' ? 'tool.pwsh.title' : 'tool.bash.title');
  const { body } = model;
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={title}
      summary={model.summary}
      suffix={
        model.background ? <span className="qp-caption">{t('shell.background')}</span> : undefined
      }
      capsule={model.capsule === undefined ? undefined : t(model.capsule)}
    >
      {body?.kind === 'terminal' && (
        <>
          <pre className="qt-command">
            <span aria-hidden="true">$ </span>
            {body.command}
          </pre>
          {body.output !== undefined && (
            <TerminalOutput
              text={body.output}
              {...(body.gap === undefined ? {} : { gap: body.gap })}
              label={model.summary ?? title}
            />
          )}
        </>
      )}
      {body?.kind === 'receipt' && (
        <dl className="qt-receipt" aria-label={t('shell.startedInBackground')}>
          <dt>{t('shell.command')}</dt>
          <dd>
            <code>{body.command}</code>
          </dd>
          <dt>{t('shell.folder')}</dt>
          <dd>
            <code>{body.cwd}</code>
          </dd>
        </dl>
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={title} />}
    </ToolCard>
  );
}

function ReadCard(props: { view: ToolCallViewProps; model: ReadModel }) {
  const t = useT();
  const { model, view } = props;
  const { body } = model;
  return (
    <ToolCard
      callId={view.callId}
      host={hostOf(view)}
      state={model.state}
      icon="file"
      title={t(model.title)}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
      openPath={model.path}
      openLines={
        body?.kind === 'excerpt' && body.lines.length > 0
          ? { first: body.firstLine, last: body.firstLine + body.lines.length - 1 }
          : undefined
      }
    >
      {body?.kind === 'excerpt' && (
        <FileExcerpt
          path={model.summary ?? ''}
          lines={body.lines}
          firstLine={body.firstLine}
          {...(body.caption === undefined && body.cutLines === undefined
            ? {}
            : {
                caption: [body.caption, body.cutLines]
                  .filter((m) => m !== undefined)
                  .map((m) => t(m))
                  .join(' · '),
              })}
        />
      )}
      {body?.kind === 'empty' && <p className="qp-caption">{t('excerpt.empty')}</p>}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t(model.title)} />}
    </ToolCard>
  );
}

/** `read`: the file excerpt card. */
export function ReadView(props: ToolCallViewProps) {
  const model = useModel(props, readModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <ReadCard view={props} model={model} />
  );
}

function DiffCard(props: { view: ToolCallViewProps; model: DiffModel }) {
  const t = useT();
  const { model, view } = props;
  const { body } = model;
  return (
    <ToolCard
      callId={view.callId}
      host={hostOf(view)}
      state={model.state}
      icon="pencil"
      title={t(model.title)}
      summary={model.summary}
      suffix={model.stats === undefined ? undefined : <DiffStats stats={model.stats} />}
      openPath={model.path}
      openLines={body?.kind === 'diff' && body.lineNumbers ? touchedLines(body.hunks) : undefined}
    >
      {body?.kind === 'diff' && model.stats !== undefined && (
        <DiffView
          path={model.summary ?? ''}
          hunks={body.hunks}
          stats={model.stats}
          lineNumbers={body.lineNumbers}
          {...(body.note === undefined ? {} : { note: t(body.note) })}
        />
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t(model.title)} />}
    </ToolCard>
  );
}

/**
 * The preparing row of `write` and `edit`: the only component that reads the streaming
 * argument text, and only its size ("Preparing content N KB").
 */
function PreparingContent(props: PreparingToolCallViewProps & { title: string }) {
  const t = useT();
  const { useToolCallArgumentsPartial } = useToolHooks();
  const raw = useToolCallArgumentsPartial(props.callId);
  return (
    <ToolRowChrome
      state="preparing"
      icon="pencil"
      title={props.title}
      summary={t('row.preparingContent', { size: preparingSize(raw) })}
    />
  );
}

/** `write`: the diff card (a preparing component apart from the dispatched one). */
export function WriteView(props: ToolCallViewProps) {
  const t = useT();
  if (props.phase === 'preparing')
    return <PreparingContent {...props} title={t('tool.write.title')} />;
  return <DispatchedChange view={props} build={writeModel} />;
}

/** `edit`: the diff card (a preparing component apart from the dispatched one). */
export function EditView(props: ToolCallViewProps) {
  const t = useT();
  if (props.phase === 'preparing')
    return <PreparingContent {...props} title={t('tool.edit.title')} />;
  return <DispatchedChange view={props} build={editModel} />;
}

function DispatchedChange(props: { view: ToolCallViewProps; build: typeof writeModel }) {
  const model = useModel(props.view, props.build);
  return model.kind === 'generic' ? (
    <Generic view={props.view} model={model} />
  ) : (
    <DiffCard view={props.view} model={model} />
  );
}

/** `str_replace_editor`: `view` as the read card, changes as the diff card. */
export function EditorView(props: ToolCallViewProps) {
  const model = useModel(props, editorModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  if (model.kind === 'read') return <ReadCard view={props} model={model} />;
  return <DiffCard view={props} model={model} />;
}

function SearchCard(props: { view: ToolCallViewProps; model: SearchModel; icon: IconName }) {
  const t = useT();
  const { model, view } = props;
  const { body } = model;
  const host = hostOf(view);
  return (
    <ToolCard
      callId={view.callId}
      host={host}
      state={model.state}
      icon={props.icon}
      title={t(model.title)}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {body?.kind === 'results' && (
        <SearchResults
          pattern={model.pattern ?? ''}
          groups={body.groups}
          {...(host.openFile === undefined ? {} : { openFile: host.openFile })}
          {...(body.truncated ? { note: t('search.truncated') } : {})}
        />
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t(model.title)} />}
    </ToolCard>
  );
}

/** `grep`: the search card. */
export function GrepView(props: ToolCallViewProps) {
  const model = useModel(props, grepModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <SearchCard view={props} model={model} icon="search" />
  );
}

/** `glob`: the search card. */
export function GlobView(props: ToolCallViewProps) {
  const model = useModel(props, globModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <SearchCard view={props} model={model} icon="files" />
  );
}

/** `web_fetch`: the web page card. */
export function WebFetchView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, webModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const { body } = model;
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="globe"
      title={t('tool.web_fetch.title')}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {body?.kind === 'page' && <WebPageSummary {...body.page} />}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t('tool.web_fetch.title')} />}
    </ToolCard>
  );
}

/** `read_image`: the image card; its gallery goes through the `tool.call.images` slot. */
export function ReadImageView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, imageModel);
  const Gallery = useSlotView(IMAGES_SLOT, props.toolName) ?? ImageGallery;
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const images = model.images?.map(({ description, note, ...image }) => ({
    ...image,
    description: t(description),
    ...(note === undefined ? {} : { note: t(note) }),
  }));
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="image"
      title={t('tool.read_image.title')}
      summary={model.summary}
      openPath={model.path}
    >
      {/* eslint-disable-next-line react-hooks/static-components -- the gallery is the images slot's registration */}
      {images !== undefined && <Gallery images={images} loadImage={props.loadImage} />}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.read_image.title')} />
      )}
    </ToolCard>
  );
}

/** `todo_write`: the list, compared with the previous recorded write of the session. */
export function TodoView(props: ToolCallViewProps) {
  const t = useT();
  const { usePreviousToolCall } = useToolHooks();
  const previous = usePreviousToolCall(props.callId, props.toolName);
  const previousArguments = previous?.arguments;
  const model = useMemo(
    () => todoModel(cardInput(props), previousArguments),
    [props, previousArguments],
  );
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={t('tool.todo_write.title')}
      summary={model.summary === undefined ? undefined : t(model.summary)}
    >
      {model.rows !== undefined && (
        <ul className="qt-todo">
          {model.rows.map((row) => (
            <li key={row.id} className={`qt-todo__item qt-todo__item--${row.status}`}>
              <span className="qt-todo__box" aria-hidden="true" />
              <span className="qt-todo__content">{row.content}</span>
              <span className="qp-caption">{t(`todo.status.${row.status}`)}</span>
              {row.added && <span className="qt-tag qt-tag--added">{t('todo.added')}</span>}
              {row.previousStatus !== undefined && (
                <span className="qt-tag">
                  {t('todo.changed', { from: t(`todo.status.${row.previousStatus}`) })}
                </span>
              )}
              {row.moved && <span className="qt-tag">{t('todo.moved')}</span>}
              {!row.added &&
                row.previousStatus === undefined &&
                !row.moved &&
                previous !== undefined && (
                  <span className="qt-tag qt-tag--quiet">{t('todo.unchanged')}</span>
                )}
            </li>
          ))}
          {model.removed?.map((item) => (
            <li key={`removed-${item.id}`} className="qt-todo__item qt-todo__item--removed">
              <span className="qt-todo__box" aria-hidden="true" />
              <del className="qt-todo__content">{item.content}</del>
              <span className="qt-tag qt-tag--removed">{t('todo.removed')}</span>
            </li>
          ))}
        </ul>
      )}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.todo_write.title')} />
      )}
    </ToolCard>
  );
}

/** `question`: questions and answers paired by id; no invented answer. */
export function QuestionView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, questionModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const summary =
    model.summary ??
    (model.count === undefined ? undefined : t('question.count', { count: model.count }));
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="question"
      title={t('tool.question.title')}
      summary={summary}
      suffix={
        model.verdict === undefined ? undefined : (
          <span className="qp-caption">{t(model.verdict)}</span>
        )
      }
    >
      {model.rows !== undefined && (
        <dl className="qt-questions">
          {model.rows.map((row) => (
            <div key={row.id} className="qt-questions__pair">
              <dt>{row.question}</dt>
              {row.options !== undefined && row.answer === undefined && (
                <dd className="qp-caption">{row.options.join(' / ')}</dd>
              )}
              {row.answer !== undefined && (
                <dd>
                  <span className="qp-caption">{t('question.answer')}: </span>
                  {row.answer.length === 0 ? t('question.noAnswer') : row.answer.join(', ')}
                </dd>
              )}
            </div>
          ))}
        </dl>
      )}
      {model.verdict !== undefined && <p className="qt-verdict">{t(model.verdict)}</p>}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.question.title')} />
      )}
    </ToolCard>
  );
}

/** `run_code`: the dispatch card; the calls its code made render under it. */
export function RunCodeView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, runCodeModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const calls = props.phase === 'preparing' ? 0 : props.subCallCount;
  const title = t('tool.run_code.title');
  return (
    <ToolCard
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="code"
      title={title}
      summary={model.summary}
      suffix={
        calls === 0 ? undefined : (
          <span className="qp-caption">{t('row.calls', { count: calls })}</span>
        )
      }
    >
      {model.code !== undefined && (
        <>
          <TextBlock label={t('runCode.code')} text={model.code} language="python" />
          {model.progress !== undefined &&
            (model.progress !== '' || model.progressGap !== undefined) && (
              <TerminalOutput
                text={model.progress}
                {...(model.progressGap === undefined ? {} : { gap: model.progressGap })}
                label={model.summary ?? title}
              />
            )}
          {model.output !== undefined && (
            <TextBlock label={t('runCode.printed')} text={model.output} />
          )}
        </>
      )}
    </ToolCard>
  );
}
