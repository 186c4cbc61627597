import { useT } from '@qilin-agent/i18n';
import { useEffect, useState } from 'react';

/** Copies `text` to the clipboard and says so for a moment. */
export function CopyButton(props: { text: string; label?: string }) {
  const t = useT();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      className="qp-button"
      onClick={() => {
        void navigator.clipboard?.writeText(props.text).then(() => setCopied(true));
      }}
    >
      {copied ? t('terminal.copied') : (props.label ?? t('terminal.copy'))}
    </button>
  );
}
