// What the file-changing views share: the diff card, the preparing row with the content's size, the
// dispatched change.
import { useT } from '@qilin-agent/i18n';
import { DiffStats, DiffView, ToolRowChrome } from '@qilin-agent/ui-primitives';
import type { writeModel } from '../models/diff';
import { preparingSize, touchedLines, type DiffModel } from '../models/diff';
import type {
  PreparingToolCallViewProps,
  StartedToolCallViewProps,
  ToolCallOwnerProps,
} from '../slots';
import { PlainDetails, ToolRow, useToolHooks } from './card';
import { EditDiagnosticsBlock, EditDiagnosticsMark } from './lsp';
import { Generic, hostOf, useModel } from './shared';

/** The diff card of a dispatched `write`, `edit` or editor change; the generic card otherwise. */
export function DiffCard(props: { view: ToolCallOwnerProps; model: DiffModel }) {
  const t = useT();
  const { model, view } = props;
  const { body, diagnostics } = model;
  const host = hostOf(view);
  const stats = model.stats === undefined ? undefined : <DiffStats stats={model.stats} />;
  return (
    <ToolRow
      callId={view.callId}
      host={host}
      state={model.state}
      icon="pencil"
      title={t(model.title)}
      summary={model.summary}
      suffix={
        diagnostics === undefined ? (
          stats
        ) : (
          <>
            {stats}
            <EditDiagnosticsMark diagnostics={diagnostics} />
          </>
        )
      }
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
      {diagnostics !== undefined && (
        <EditDiagnosticsBlock
          diagnostics={diagnostics}
          openFile={host.openFile}
          label={model.summary ?? ''}
        />
      )}
    </ToolRow>
  );
}

/**
 * The preparing row of `write` and `edit`: the only component that reads the streaming
 * argument text, and only its size ("Preparing content N KB").
 */
export function PreparingContent(props: PreparingToolCallViewProps & { title: string }) {
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

/** A dispatched change: its card model built by `build`, shown as the diff card. */
export function DispatchedChange(props: {
  view: StartedToolCallViewProps;
  build: typeof writeModel;
}) {
  const model = useModel(props.view, props.build);
  return model.kind === 'generic' ? (
    <Generic view={props.view} model={model} />
  ) : (
    <DiffCard view={props.view} model={model} />
  );
}
