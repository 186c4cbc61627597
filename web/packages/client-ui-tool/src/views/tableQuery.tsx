import { useLocale, useT } from '@qilin-agent/i18n';
import { tableQueryModel } from '../models/table';
import type { ToolCallOwnerProps } from '../slots';
import { ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `table_query`: the groups of a CSV aggregate as a table, with the total and the counts. */
export function TableQueryView(props: ToolCallOwnerProps) {
  const t = useT();
  const locale = useLocale();
  const model = useModel(props, tableQueryModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 6 });
  const { columns, groups, measure } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="files"
      title={t('tool.table_query.title')}
      summary={model.summary}
      suffix={
        model.groupCount === undefined
          ? undefined
          : t('tableQuery.groups', { count: model.groupCount })
      }
    >
      {columns !== undefined && groups !== undefined && measure !== undefined && (
        <>
          <table className="qt-table">
            <thead>
              <tr>
                {columns.map((name) => (
                  <th scope="col" key={name}>
                    {name}
                  </th>
                ))}
                <th scope="col">
                  <code>{measure}</code>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.map((group, index) => (
                <tr key={index}>
                  {group.cells.map((cell, column) => (
                    <td key={column}>{cell}</td>
                  ))}
                  <td>{number.format(group.value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="qp-caption">
            {t('tableQuery.total', {
              total: model.total == null ? '—' : number.format(model.total),
              rows: number.format(model.matchedRows ?? 0),
            })}
            {model.truncated === true && ` ${t('tableQuery.truncated')}`}
          </p>
        </>
      )}
    </ToolRow>
  );
}
