import { memo } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';

const COMPONENTS: Components = {
  // Links leave the page in a new tab and give it no handle back to this one.
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
};

/**
 * The model's text as Markdown. Raw HTML in the text is never rendered as HTML (it shows as
 * text), and link targets with unsafe schemes (`javascript:`) are dropped by the renderer's
 * URL check.
 */
export const MarkdownText = memo(function MarkdownText(props: { text: string }) {
  return (
    <div className="qc-markdown">
      <ReactMarkdown components={COMPONENTS} skipHtml={false}>
        {props.text}
      </ReactMarkdown>
    </div>
  );
});
