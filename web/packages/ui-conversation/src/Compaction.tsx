import { useT } from '@qilin-agent/i18n';
import type { CompactionNode } from '@qilin-agent/protocol';
import { memo } from 'react';
import { MarkdownText } from '@qilin-agent/ui-primitives';

/**
 * A compaction in the transcript: a divider saying the conversation above it was summarised
 * for the model, with the estimated request size before and after when known, and the summary
 * folded beneath it. The turns above stay as they were; only the model's view changed.
 */
export const CompactionDivider = memo(function CompactionDivider(props: {
  compaction: CompactionNode;
}) {
  const t = useT();
  const { compaction } = props;
  const sized = compaction.estimatedTokensBefore > 0;
  return (
    <section
      className="qc-compaction"
      data-compaction-seq={compaction.seq}
      aria-label={t('compaction.label')}
    >
      <details className="qc-compaction__details">
        <summary className="qc-compaction__title">
          <span>{t('compaction.label')}</span>
          {sized ? (
            <span className="qc-compaction__size">
              {t('compaction.size', {
                before: compaction.estimatedTokensBefore,
                after: compaction.estimatedTokensAfter,
              })}
            </span>
          ) : null}
        </summary>
        <div className="qc-compaction__summary">
          <MarkdownText text={compaction.summary} />
        </div>
      </details>
    </section>
  );
});

/** The compactions that follow the first `turns` turns. */
export function compactionsAfter(
  compactions: readonly CompactionNode[],
  turns: number,
): readonly CompactionNode[] {
  return compactions.length === 0
    ? compactions
    : compactions.filter((compaction) => compaction.afterTurns === turns);
}
