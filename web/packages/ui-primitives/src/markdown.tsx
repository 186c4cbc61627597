import { memo } from 'react';
import { useT } from '@qilin-agent/i18n';
import { HighlightedCode } from './highlight/code';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

/** GitHub-flavoured Markdown, as the terminal renders it: tables, strikethrough, task lists, autolinks. */
const REMARK_PLUGINS = [remarkGfm];

/** The language a fenced block names (` ```python `), from the class the renderer gives it. */
const FENCE_LANGUAGE = /(?:^|\s)language-(\S+)/;

/** A task list item's box: read-only, and named for a screen reader by its state. */
function TaskBox(props: { checked: boolean }) {
  const t = useT();
  return (
    <input
      type="checkbox"
      checked={props.checked}
      disabled
      aria-label={props.checked ? t('markdown.taskDone') : t('markdown.taskOpen')}
    />
  );
}

const COMPONENTS: Components = {
  // GitHub task lists (`- [x] …`): the only input the Markdown renders.
  input: ({ type, checked }) =>
    type === 'checkbox' ? <TaskBox checked={checked === true} /> : null,
  // Links leave the page in a new tab and give it no handle back to this one.
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
  // A fenced block naming its language is highlighted once the highlighter chunk arrives;
  // inline code and blocks without a language stay as they are.
  code: ({ className, children }) => {
    const language = className === undefined ? undefined : FENCE_LANGUAGE.exec(className)?.[1];
    if (language === undefined || typeof children !== 'string') {
      return <code className={className}>{children}</code>;
    }
    return (
      <HighlightedCode
        className={className}
        code={children.endsWith('\n') ? children.slice(0, -1) : children}
        language={language}
      />
    );
  },
};

/**
 * The model's text as GitHub-flavoured Markdown (tables, strikethrough, task lists shown
 * read-only, bare URLs as links). Raw HTML in the text is never rendered as HTML (it shows as
 * text), and link targets with unsafe schemes (`javascript:`) are dropped by the renderer's
 * URL check. Fenced code blocks are highlighted on demand (see `HighlightedCode`).
 */
export const MarkdownText = memo(function MarkdownText(props: { text: string }) {
  return (
    <div className="qp-markdown">
      <ReactMarkdown components={COMPONENTS} remarkPlugins={REMARK_PLUGINS} skipHtml={false}>
        {props.text}
      </ReactMarkdown>
    </div>
  );
});
