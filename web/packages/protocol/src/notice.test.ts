import { describe, expect, test } from 'vitest';
import { fixtureText } from '../../../test-support/fixtures';
import { formatSpillNotice, hasSpillNotice, parseSpillNotice } from './notice';

interface Vectors {
  written: { path: string; totalBytes: string; notice: string }[];
  recognised: { name: string; text: string; notice: { path: string; totalBytes: string } | null }[];
}

// Written by crates/qilin-protocol/tests/spill_notice_vectors.rs from the runtime's own functions.
const vectors = JSON.parse(fixtureText('spill-notice-vectors.json')) as Vectors;

describe('the spill notice as the runtime writes and reads it', () => {
  test.each(vectors.recognised.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    expect(parseSpillNotice(vector.text) ?? null).toEqual(vector.notice);
    expect(hasSpillNotice(vector.text)).toBe(vector.notice !== null);
  });

  test.each(vectors.written.map((v) => [v.path, v] as const))('written for %s', (_path, vector) => {
    expect(formatSpillNotice(vector.path, vector.totalBytes)).toBe(vector.notice);
    expect(parseSpillNotice(vector.notice)).toEqual({
      path: vector.path,
      totalBytes: vector.totalBytes,
    });
  });

  test('the vectors hold both answers', () => {
    const found = vectors.recognised.filter((v) => v.notice !== null).length;
    expect(found).toBeGreaterThanOrEqual(5);
    expect(vectors.recognised.length - found).toBeGreaterThanOrEqual(10);
  });
});
