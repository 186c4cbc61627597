/** The icons of the tool rows, drawn on a 16-unit grid with the current text colour. */
export type IconName =
  | 'terminal'
  | 'file'
  | 'image'
  | 'pencil'
  | 'search'
  | 'files'
  | 'globe'
  | 'checklist'
  | 'question'
  | 'code'
  | 'book'
  | 'tool'
  | 'shield'
  | 'agent'
  | 'goal'
  | 'clock'
  | 'loop'
  | 'workflow';

const paths: Record<IconName, string> = {
  terminal: 'M2.5 3.5h11v9h-11z M5 6.5l2 1.5-2 1.5 M8.5 10h3',
  file: 'M4 1.5h5l3 3v10H4z M9 1.5v3h3',
  image: 'M2.5 3h11v10h-11z M2.5 11l3.5-3.5 3 3 2-2 2.5 2.5 M10.5 6.5h.01',
  pencil: 'M3 13l.8-3 7-7 2.2 2.2-7 7z M9.5 4.3l2.2 2.2',
  search: 'M7 2.5a4.5 4.5 0 1 1 0 9 4.5 4.5 0 0 1 0-9z M10.3 10.3l3.2 3.2',
  files: 'M5 1.5h4.5l2.5 2.5v8H5z M3 4v10.5h7',
  globe:
    'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M1.5 8h13 M8 1.5c2 2 2 11 0 13 M8 1.5c-2 2-2 11 0 13',
  checklist: 'M2.5 4l1.2 1.2 2-2.2 M2.5 9.5l1.2 1.2 2-2.2 M7.5 4.5h6 M7.5 10h6',
  question:
    'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M6.2 6.2a1.9 1.9 0 1 1 2.6 1.8c-.6.3-.8.7-.8 1.3 M8 11.5h.01',
  code: 'M5.5 4.5L2 8l3.5 3.5 M10.5 4.5L14 8l-3.5 3.5 M9 3l-2 10',
  book: 'M2.5 3c2-1 4-1 5.5.5v10c-1.5-1.5-3.5-1.5-5.5-.5z M13.5 3c-2-1-4-1-5.5.5v10c1.5-1.5 3.5-1.5 5.5-.5z',
  tool: 'M10 2.5a3 3 0 0 0-3.6 3.9L2.5 10.3l2.2 2.2 3.9-3.9A3 3 0 0 0 12.5 5l-1.8 1.8-1.5-1.5z',
  shield: 'M8 1.5l5.5 2v4c0 3.5-2.5 6-5.5 7-3-1-5.5-3.5-5.5-7v-4z',
  agent:
    'M8 2a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5z M3 14c0-2.8 2.2-5 5-5s5 2.2 5 5 M12 2.5l1.5-1 M12.5 5h1.5',
  goal: 'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M8 4.5a3.5 3.5 0 1 1 0 7 3.5 3.5 0 0 1 0-7z M8 7.5h.01',
  clock: 'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M8 4v4l2.5 1.5',
  loop: 'M13 8a5 5 0 1 1-1.5-3.6 M11.5 1.8v2.6h-2.6',
  workflow: 'M2.5 2.5h4v3h-4z M9.5 10.5h4v3h-4z M4.5 5.5v3.5a1.5 1.5 0 0 0 1.5 1.5h3.5',
};

/** A row icon; decorative, so hidden from assistive technology (the title says it all). */
export function Icon(props: { name: IconName; className?: string }) {
  return (
    <svg
      className={['qp-icon', props.className].filter(Boolean).join(' ')}
      viewBox="0 0 16 16"
      width="16"
      height="16"
      aria-hidden="true"
      focusable="false"
    >
      <path
        d={paths[props.name]}
        fill="none"
        stroke="currentColor"
        strokeWidth="1.3"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}
