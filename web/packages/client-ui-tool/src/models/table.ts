import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, stateOf } from './outcome';

/** The aggregates `table_query` computes. */
const AGGREGATES = ['sum', 'avg', 'min', 'max', 'count'] as const;

/** One group of a `table_query` result: its cell in each grouped column, and its aggregate. */
export interface TableGroup {
  readonly cells: readonly string[];
  readonly value: number;
}

/** The card of a `table_query` call: the groups as a table, the total and what was left out. */
export interface TableQueryModel {
  readonly kind: 'tableQuery';
  readonly state: CallState;
  /** The file queried, for the row. */
  readonly summary?: string;
  /** The grouped columns' names; absent until the call ended `ok`. */
  readonly columns?: readonly string[];
  /** The aggregate and its column (`sum(amount)`, `count`). */
  readonly measure?: string;
  readonly groups?: readonly TableGroup[];
  /** The aggregate over every matching row; `null` when none matched for `avg`/`min`/`max`. */
  readonly total?: number | null;
  /** Groups that matched in all, and rows of the file that met every condition. */
  readonly groupCount?: number;
  readonly matchedRows?: number;
  /** True when groups were left out past the call's `limit`. */
  readonly truncated?: boolean;
}

/**
 * The `table_query` card from the raw fields: the file from the arguments, the groups as rows
 * of their grouped cells and aggregate, the total and the counts. A failed call or a result of
 * another shape falls back to the generic card.
 */
export function tableQueryModel(input: CardInput): TableQueryModel | GenericModel {
  const state = stateOf(input);
  let summary: string | undefined;
  try {
    summary = new Fields(input.arguments, 'arguments').optionalText('path');
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
  }
  if (input.result === undefined) return { kind: 'tableQuery', state, summary };
  if (endedBadly(input)) return genericModel(input);
  try {
    const output = new Fields(input.result.output, 'output');
    const columns = output.list('columns_grouped').map((name, index) => {
      if (typeof name !== 'string') throw new Unsupported(`output.columns_grouped[${index}]`);
      return name;
    });
    const aggregate = output.oneOf('aggregate', AGGREGATES);
    const column = output.optionalText('column');
    const groups = output.list('rows').map((entry, index) => {
      const row = new Fields(entry, `output.rows[${index}]`);
      return { cells: columns.map((name) => row.text(name)), value: finite(row.raw('value')) };
    });
    const total = output.raw('total');
    return {
      kind: 'tableQuery',
      state,
      summary,
      columns,
      measure: column === undefined ? aggregate : `${aggregate}(${column})`,
      groups,
      total: total === null ? null : finite(total),
      groupCount: output.count('row_count'),
      matchedRows: output.count('matched_rows'),
      truncated: output.flag('truncated'),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** A finite JSON number, else the result is of another shape. */
function finite(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Unsupported('value');
  return value;
}
