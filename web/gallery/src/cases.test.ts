import { describe, expect, test } from 'vitest';
import { fixtureText, malformedFixtures, recordedFixtures } from '../../test-support/fixtures';
import { casesOf, FIXTURE_CWD, workspaceOf } from './cases';

describe('gallery cases', () => {
  test('every recorded call appears at every phase it went through', () => {
    const cases = casesOf('files', fixtureText('files.jsonl'));
    const phases = cases.filter((entry) => entry.callId === 'call_7').map((entry) => entry.phase);
    expect(phases).toEqual(['preparing', 'running', 'done']);
    const preparing = cases.find(
      (entry) => entry.callId === 'call_5' && entry.phase === 'preparing',
    );
    expect(preparing?.preparing.get('call_5')).toContain('"content":');
  });

  test('a nested call is shown in its root call', () => {
    const nested = casesOf('code-mode', fixtureText('code-mode.jsonl')).find(
      (entry) => entry.callId === 'call_1.2',
    );
    expect(nested?.root.callId).toBe('call_1');
  });

  test('every log yields cases, malformed ones too', () => {
    for (const name of [...recordedFixtures(), ...malformedFixtures()]) {
      expect(casesOf(name, fixtureText(`${name}.jsonl`)).length, name).toBeGreaterThan(0);
    }
    expect(workspaceOf(fixtureText('malformed/unknown-fields.jsonl'))).toBe(
      '/home/qilin/workspace',
    );
    expect(workspaceOf('not json')).toBe(FIXTURE_CWD);
  });
});
