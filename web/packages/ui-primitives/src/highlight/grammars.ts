/**
 * The highlighter itself, loaded on demand (`import('./grammars')`) so it is a chunk of its own
 * that the page fetches only when a code block or a file preview shows. It turns text into one
 * `hast` tree per line, with highlight.js's token classes.
 */
import type { Element, ElementContent, Root, RootContent } from 'hast';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { createLowlight } from 'lowlight';

/** The registered grammars; their aliases (`py`, `ts`, `sh`, `yml`, `toml`, `html`…) come along. */
const lowlight = createLowlight({
  bash,
  css,
  diff,
  go,
  ini,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  typescript,
  xml,
  yaml,
});
lowlight.registerAlias({ javascript: ['jsx', 'mjs', 'cjs'], typescript: ['tsx', 'mts', 'cts'] });

/** The registered grammar's name for a language name or alias, if there is one. */
export function knownLanguage(language: string): string | undefined {
  const name = language.trim().toLowerCase();
  return name !== '' && lowlight.registered(name) ? name : undefined;
}

/**
 * The text's lines as token trees (one root per line, without its line break), or `undefined`
 * when no grammar is registered under that name.
 */
export function highlightLines(text: string, language: string): Root[] | undefined {
  const name = knownLanguage(language);
  if (name === undefined) return undefined;
  return splitLines(lowlight.highlight(name, text).children);
}

/**
 * Cuts a token tree at its line breaks: a token spanning lines (a block comment, a long string)
 * is repeated on each line it covers, with the same classes.
 */
function splitLines(nodes: readonly RootContent[]): Root[] {
  const lines: Root[] = [];
  let current: ElementContent[] = [];
  /** The open tokens, outermost first, each with the children gathered on this line. */
  const open: { element: Element; children: ElementContent[] }[] = [];
  const target = (): ElementContent[] => open.at(-1)?.children ?? current;
  const endLine = () => {
    // Close the open tokens on this line, innermost first, each inside its parent.
    let inner: Element | undefined;
    for (const token of [...open].reverse()) {
      const children = inner === undefined ? token.children : [...token.children, inner];
      inner = { ...token.element, children };
    }
    if (inner !== undefined) current.push(inner);
    lines.push({ type: 'root', children: current });
    current = [];
    for (const token of open) token.children = [];
  };
  const walk = (node: RootContent) => {
    if (node.type === 'text') {
      node.value.split('\n').forEach((part, index) => {
        if (index > 0) endLine();
        if (part !== '') target().push({ type: 'text', value: part });
      });
    } else if (node.type === 'element') {
      const token = { element: node, children: [] as ElementContent[] };
      open.push(token);
      node.children.forEach(walk);
      open.pop();
      target().push({ ...token.element, children: token.children });
    }
  };
  nodes.forEach(walk);
  lines.push({ type: 'root', children: current });
  return lines;
}
