import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { repositoryFile } from '../../../test-support/fixtures';

test('the event types are a current copy of bindings/qilin-protocol.ts', () => {
  const bindings = repositoryFile('bindings/qilin-protocol.ts');
  const copy = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'generated.ts'), 'utf8');
  expect(
    copy === bindings,
    'packages/protocol/src/generated.ts is stale: run `npm run sync-protocol` in web/ and commit it',
  ).toBe(true);
});
