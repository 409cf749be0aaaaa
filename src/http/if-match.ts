// Optimistic concurrency of section 18's updates and deletes: every object carries `version`, and a
// change sends back the one it was made from, as `If-Match: "<version>"` or `version` in the body.
// A stale one is 412 `version_conflict` and changes nothing; none at all is 428 `version_required`
// (a change made blind would undo someone else's without a word).
import type { FastifyRequest } from 'fastify';
import { header } from './auth.ts';
import { AppError, invalid } from './errors.ts';

/** The versions a change was made from: each must be the object's current one. Empty: `If-Match: *`. */
export type ExpectedVersions = readonly number[];

const IF_MATCH = /^(?:W\/)?"?(\d{1,10})"?$/;

/** The versions the request names (If-Match and the body's `version`); 428 when it names none. */
export function expectedVersions(request: FastifyRequest, bodyVersion: number | undefined): ExpectedVersions {
  const versions: number[] = bodyVersion === undefined ? [] : [bodyVersion];
  const value = header(request, 'if-match')?.trim();
  if (value === '*') return versions;
  if (value !== undefined && value !== '') {
    const m = IF_MATCH.exec(value);
    if (m === null) throw invalid('If-Match', 'must be the version in quotes, e.g. "3"');
    versions.push(Number(m[1]));
  }
  if (versions.length === 0) {
    throw new AppError(428, 'version_required', 'send the version you changed from: If-Match: "<version>", or version in the body');
  }
  return versions;
}

/** 412 unless every expected version is the current one. */
export function checkVersion(expected: ExpectedVersions, current: number): void {
  const stale = expected.find((v) => v !== current);
  if (stale !== undefined) {
    throw new AppError(412, 'version_conflict', `the object changed since version ${stale}: it is at version ${current}; read it again`);
  }
}

/** The ETag of an object's version, as If-Match sends it back. */
export const etagOf = (version: number): string => `"${version}"`;
