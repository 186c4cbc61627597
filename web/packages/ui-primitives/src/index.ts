/**
 * The atoms Qilin's tool cards are built from. Each owns its limits and fallbacks (see the
 * README): terminal output, unified diff, file excerpt, search results, web page summary,
 * image gallery, status dot, exit capsule and the row every call has.
 */
export { CopyButton } from './copy';
export {
  DiffStats,
  DiffView,
  addedFile,
  countHunks,
  numberHunkLines,
  parseUnifiedDiff,
  type DiffHunk,
  type DiffLine,
  type DiffStatsValue,
  type DiffViewProps,
} from './diff';
export { FileExcerpt, type FileExcerptProps } from './excerpt';
export { Icon, type IconName } from './icons';
export {
  ImageGallery,
  inlineImageLoader,
  type GalleryImage,
  type ImageLoader,
  type ImageSource,
} from './images';
export { fold, formatBytes, splitLines, stripAnsi, type Folded } from './lines';
export { RowAction, ToolRowChrome, type ToolRowChromeProps } from './row';
export {
  SearchResults,
  type SearchGroup,
  type SearchLine,
  type SearchResultsProps,
} from './search';
export { ExitCapsule, StatusDot, isInFlight, type CallState } from './status';
export {
  TerminalOutput,
  ansiLines,
  type AnsiSegment,
  type TerminalGap,
  type TerminalOutputProps,
} from './terminal';
export { WebPageSummary, isWebAddress, type WebPageSummaryProps } from './web';
export { HighlightedCode, extensionOf, useHighlightedLines } from './highlight/code';
export { MarkdownText } from './markdown';
