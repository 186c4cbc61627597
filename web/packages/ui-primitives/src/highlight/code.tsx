import { toJsxRuntime } from 'hast-util-to-jsx-runtime';
import { useEffect, useState, type ReactNode } from 'react';
import { Fragment, jsx, jsxs } from 'react/jsx-runtime';

import type * as GrammarsModule from './grammars';

type Grammars = typeof GrammarsModule;

/** The highlighter chunk, fetched once on first use and shared by every code block. */
let grammars: Promise<Grammars> | undefined;

function loadGrammars(): Promise<Grammars> {
  grammars ??= import('./grammars');
  return grammars;
}

/**
 * The text's lines highlighted for `language` (a name or alias such as `python`, `py`, `ts`,
 * or a file's extension), once the highlighter chunk has arrived: `undefined` until then, and
 * for a language it does not know or an empty name. The tokens become React elements (the
 * text stays text, so nothing in it is ever read as HTML).
 */
export function useHighlightedLines(
  text: string,
  language: string | undefined,
): ReactNode[] | undefined {
  const [result, setResult] = useState<{ text: string; language: string; lines: ReactNode[] }>();
  useEffect(() => {
    if (language === undefined || language.trim() === '') return;
    let current = true;
    loadGrammars().then(
      (loaded) => {
        const roots = loaded.highlightLines(text, language);
        if (!current || roots === undefined) return;
        const lines = roots.map((root) => toJsxRuntime(root, { Fragment, jsx, jsxs }));
        setResult({ text, language, lines });
      },
      // A chunk that fails to load leaves the plain text in place.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [text, language]);
  return result !== undefined && result.text === text && result.language === language
    ? result.lines
    : undefined;
}

/**
 * A block of code: its plain text at once, its highlighted tokens when the highlighter chunk
 * arrives. An unknown language stays plain.
 */
export function HighlightedCode(props: {
  code: string;
  language?: string | undefined;
  className?: string;
}) {
  const lines = useHighlightedLines(props.code, props.language);
  return (
    <code className={props.className} data-highlighted={lines === undefined ? undefined : 'true'}>
      {lines === undefined
        ? props.code
        : lines.map((line, index) => (
            <Fragment key={index}>
              {index > 0 ? '\n' : null}
              {line}
            </Fragment>
          ))}
    </code>
  );
}

/** The highlighter's language for a file path, from its extension (`src/main.rs` → `rs`). */
export function extensionOf(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1) : undefined;
}
