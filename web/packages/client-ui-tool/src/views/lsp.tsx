// The `lsp` card — locations grouped by file, symbols, calls, diagnostics, a hover's Markdown, or
// why nothing came back — and the diagnostics block the file-changing cards show.
import { useT } from '@qilin-agent/i18n';
import { formatBytes, MarkdownText } from '@qilin-agent/ui-primitives';
import {
  LSP_SYMBOL_KINDS,
  lspModel,
  lspSuffix,
  rowLines,
  type EditDiagnosticsRow,
  type LspEmptyRow,
  type LspGroup,
  type LspResultRow,
  type LspRow,
  type LspSymbolKind,
  type LspSymbolNode,
} from '../models/lsp';
import type { ToolCallHost, ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

type OpenFile = ToolCallHost['openFile'];

/** The glyph of each severity; its word is always shown beside it. */
const SEVERITY_GLYPHS = { error: '✕', warning: '▲', information: 'i', hint: '•' } as const;

/** The empty reasons the row shows as a problem (a capsule), not as a plain fact. */
const PROBLEMS = new Set(['no_server', 'timed_out', 'crashed']);

/** A diagnostic's severity: its glyph in the severity's colour and its word. */
export function SeverityMark(props: { severity: keyof typeof SEVERITY_GLYPHS }) {
  const t = useT();
  return (
    <span className="qt-lsp-severity" data-severity={props.severity}>
      <span className="qt-lsp-severity__glyph" aria-hidden="true">
        {SEVERITY_GLYPHS[props.severity]}
      </span>
      {t(`lsp.severity.${props.severity}`)}
    </span>
  );
}

/**
 * Where a row is in its file, `line:character`: a link opening the file at that line through
 * the host for a file inside the workspace, plain text for any other URI.
 */
function Place(props: { row: LspRow; openFile: OpenFile }) {
  const t = useT();
  const { row, openFile } = props;
  const place = `${row.line}:${row.character}`;
  const path = row.path;
  if (path === undefined || openFile === undefined) {
    return <span className="qt-lsp__place">{place}</span>;
  }
  return (
    <button
      type="button"
      className="qp-link qt-lsp__place"
      aria-label={t('lsp.openAt', { path, line: row.line })}
      onClick={() => openFile(path, rowLines(row))}
    >
      {place}
    </button>
  );
}

function kindLabel(kind: string, t: ReturnType<typeof useT>): string {
  return (LSP_SYMBOL_KINDS as readonly string[]).includes(kind)
    ? t(`lsp.kind.${kind as LspSymbolKind}`)
    : kind.replace(/_/g, ' ');
}

/** A definition's lines around it, numbered, its own line marked. */
function Context(props: { row: LspRow; label: string }) {
  const t = useT();
  const { row } = props;
  return (
    <pre
      className="qp-search__lines qt-lsp__context"
      tabIndex={0}
      aria-label={t('lsp.context', { path: props.label })}
    >
      {row.context.map((line) => (
        <span
          key={line.line}
          className={
            line.line === row.line ? 'qp-search__line' : 'qp-search__line qp-search__line--context'
          }
          data-target={line.line === row.line ? 'true' : undefined}
        >
          <span className="qp-excerpt__number" aria-hidden="true">
            {line.line}
          </span>
          <span className="qp-excerpt__code">{line.text}</span>
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/** One location, symbol, call or diagnostic: where, what, and its line's text. */
function RowLine(props: { row: LspRow; openFile: OpenFile; label: string; gone?: boolean }) {
  const t = useT();
  const { row, openFile } = props;
  const facts = [row.source, row.code === undefined ? undefined : t('lsp.code', { code: row.code })]
    .filter((fact) => fact !== undefined)
    .join(' · ');
  // A plain location's text goes beside its place; a symbol's, call's or diagnostic's under it.
  const inline =
    row.context.length === 0 &&
    row.name === undefined &&
    row.message === undefined &&
    row.text !== undefined;
  return (
    <>
      <div className="qt-lsp__line">
        {row.severity !== undefined && <SeverityMark severity={row.severity} />}
        <Place row={row} openFile={openFile} />
        {row.name !== undefined && <code className="qt-lsp__name">{row.name}</code>}
        {row.kind !== undefined && <span className="qt-lsp__kind">{kindLabel(row.kind, t)}</span>}
        {row.detail !== undefined && <span className="qt-lsp__detail">{row.detail}</span>}
        {row.message !== undefined && <span className="qt-lsp__message">{row.message}</span>}
        {facts !== '' && <span className="qp-caption">{facts}</span>}
        {props.gone === true && <span className="qt-lsp__gone">{t('lsp.edit.gone')}</span>}
        {inline && <code className="qt-lsp__text qt-lsp__text--inline">{row.text?.trim()}</code>}
      </div>
      {row.context.length > 0 ? (
        <Context row={row} label={props.label} />
      ) : (
        !inline && row.text !== undefined && <code className="qt-lsp__text">{row.text}</code>
      )}
    </>
  );
}

/** Document symbols, each with the symbols declared inside it one level in. */
function SymbolTree(props: {
  nodes: readonly LspSymbolNode[];
  openFile: OpenFile;
  label: string;
  top?: boolean;
}) {
  const t = useT();
  return (
    <ul
      className="qt-lsp__rows qt-lsp__symbols"
      {...(props.top === true ? { 'aria-label': t('lsp.symbolsOf', { path: props.label }) } : {})}
    >
      {props.nodes.map((node, index) => (
        <li key={index} className="qt-lsp__row" data-depth={node.row.depth ?? 0}>
          <RowLine row={node.row} openFile={props.openFile} label={props.label} />
          {node.children.length > 0 && (
            <SymbolTree nodes={node.children} openFile={props.openFile} label={props.label} />
          )}
        </li>
      ))}
    </ul>
  );
}

/** One file's rows under its path (a link for a workspace file, text for any other URI). */
function FileGroup(props: { group: LspGroup; openFile: OpenFile }) {
  const t = useT();
  const { group, openFile } = props;
  const path = group.path;
  const first = group.rows[0];
  return (
    <li className="qt-lsp__file" data-openable={path === undefined ? 'false' : 'true'}>
      <div className="qt-lsp__header">
        {path === undefined || openFile === undefined ? (
          <span className="qt-lsp__path">{group.label}</span>
        ) : (
          <button
            type="button"
            className="qp-link qt-lsp__path"
            aria-label={t('row.openFile', { path: group.label })}
            onClick={() => (first === undefined ? openFile(path) : openFile(path, rowLines(first)))}
          >
            {group.label}
          </button>
        )}
      </div>
      {group.symbols !== undefined ? (
        <SymbolTree nodes={group.symbols} openFile={openFile} label={group.label} top />
      ) : (
        <ul className="qt-lsp__rows">
          {group.rows.map((row, index) => (
            <li key={index} className="qt-lsp__row" data-severity={row.severity}>
              <RowLine row={row} openFile={openFile} label={group.label} />
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** Why a result is empty: the reason in plain words, the runtime's message, how to install. */
function EmptyNote(props: { empty: LspEmptyRow }) {
  const t = useT();
  const { empty } = props;
  return (
    <div className="qt-lsp-empty" data-reason={empty.reason}>
      <p className="qt-lsp-empty__title">{t(`lsp.emptyTitle.${empty.reason}`)}</p>
      <p className="qt-lsp-empty__message">{empty.message}</p>
      {empty.hint !== undefined && (
        <p className="qt-lsp-empty__hint">
          {t('lsp.install')}: <code>{empty.hint}</code>
        </p>
      )}
    </div>
  );
}

/** What an ended `lsp` call returned, in full. */
function LspResult(props: { result: LspResultRow; openFile: OpenFile; operation: string }) {
  const t = useT();
  const { result, openFile } = props;
  const spill = result.spill;
  return (
    <>
      {result.empty !== undefined && <EmptyNote empty={result.empty} />}
      {result.hover !== undefined && (
        <div className="qt-block qt-lsp-hover" role="group" aria-label={t('lsp.hover')}>
          <p className="qt-block__label" aria-hidden="true">
            {t('lsp.hover')}
          </p>
          <MarkdownText text={result.hover} />
        </div>
      )}
      {result.groups.length > 0 && (
        <ul className="qt-lsp" aria-label={t('lsp.results', { operation: props.operation })}>
          {result.groups.map((group) => (
            <FileGroup key={group.key} group={group} openFile={openFile} />
          ))}
        </ul>
      )}
      {result.truncated && (
        <p className="qp-caption">
          {t('lsp.truncated', { shown: result.count, total: result.total })}{' '}
          {spill !== undefined &&
            (openFile === undefined ? (
              t('lsp.spilled', { path: spill.path, size: formatBytes(spill.totalBytes) })
            ) : (
              <button type="button" className="qp-link" onClick={() => openFile(spill.path)}>
                {t('lsp.spilled', { path: spill.path, size: formatBytes(spill.totalBytes) })}
              </button>
            ))}
        </p>
      )}
      {result.server !== undefined && (
        <p className="qp-caption">
          {t('lsp.answeredBy', {
            server:
              result.language === undefined
                ? result.server
                : `${result.server} (${result.language})`,
          })}
        </p>
      )}
    </>
  );
}

/**
 * `lsp`: the operation and what it asked about on the row, with how much came back or why
 * nothing did; inside, the result (see [`lspModel`]). A failed call shows its input and error;
 * data of another shape, the generic card. Inspect stays on the row either way.
 */
export function LspView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, lspModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.lsp.title');
  const host = hostOf(props);
  const operation = model.operation === undefined ? undefined : t(`lsp.op.${model.operation}`);
  const summary = [operation, model.target].filter((part) => part !== undefined).join(' · ');
  const { result } = model;
  const said =
    result === undefined
      ? ''
      : lspSuffix(result)
          .map((part) => t(part))
          .join(' · ');
  const problem = result?.empty !== undefined && PROBLEMS.has(result.empty.reason);
  return (
    <ToolRow
      callId={props.callId}
      host={host}
      state={model.state}
      icon="code"
      title={title}
      summary={summary === '' ? undefined : summary}
      suffix={said === '' || problem ? undefined : <span className="qp-caption">{said}</span>}
      capsule={problem ? said : undefined}
    >
      {result !== undefined && (
        <LspResult result={result} openFile={host.openFile} operation={operation ?? title} />
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** The row's mark of a change that brought new problems: how many, errors in their colour. */
export function EditDiagnosticsMark(props: { diagnostics: EditDiagnosticsRow }) {
  const t = useT();
  const { introduced } = props.diagnostics;
  if (introduced.length === 0) return null;
  const severity = introduced[0]?.severity ?? 'error';
  return (
    <span className="qt-lsp-severity qt-lsp-edit__mark" data-severity={severity}>
      <span className="qt-lsp-severity__glyph" aria-hidden="true">
        {SEVERITY_GLYPHS[severity]}
      </span>
      {t('lsp.edit.row', { count: introduced.length })}
    </span>
  );
}

/**
 * The diagnostics a change carried: the problems it introduced (most serious first), the ones
 * it resolved marked gone, how many the file has now, and the runtime's note.
 */
export function EditDiagnosticsBlock(props: {
  diagnostics: EditDiagnosticsRow;
  openFile: OpenFile;
  label: string;
}) {
  const t = useT();
  const { diagnostics, openFile } = props;
  const { introduced, resolved } = diagnostics;
  return (
    // A group, not a region: a page may hold many edit cards.
    <div className="qt-block qt-lsp-edit" role="group" aria-label={t('lsp.edit.label')}>
      <p className="qt-block__label" aria-hidden="true">
        {t('lsp.edit.label')}
      </p>
      {introduced.length === 0 && resolved.length === 0 && (
        <p className="qp-caption">{t('lsp.edit.none')}</p>
      )}
      {introduced.length > 0 && (
        <ul className="qt-lsp__rows" aria-label={t('lsp.edit.introduced')}>
          {introduced.map((row, index) => (
            <li key={index} className="qt-lsp__row" data-severity={row.severity}>
              <RowLine row={row} openFile={openFile} label={props.label} />
            </li>
          ))}
        </ul>
      )}
      {resolved.length > 0 && (
        <ul className="qt-lsp__rows" aria-label={t('lsp.edit.resolved')}>
          {resolved.map((row, index) => (
            <li key={index} className="qt-lsp__row" data-gone="true">
              <RowLine row={row} openFile={openFile} label={props.label} gone />
            </li>
          ))}
        </ul>
      )}
      <p className="qp-caption">
        {t('lsp.edit.remaining', { count: diagnostics.remaining, server: diagnostics.server })}
        {diagnostics.note === undefined ? '' : ` · ${diagnostics.note}`}
      </p>
    </div>
  );
}
