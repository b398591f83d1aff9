// Where the extension lives and whether this client speaks its version: read
// once per connection or pool from pg_extension, then every call is qualified
// with the extension's schema, so the API works wherever it was installed
// (CREATE EXTENSION claimqueue SCHEMA cq) whatever the session's search_path.

import { ClaimQueueError } from './errors';
import type { Queryable } from './types';

/** The extension versions this client supports: at least `min`, below `below` (docs/clients.md). */
export const SUPPORTED_EXTENSION = { min: '0.5.0', below: '0.6.0' } as const;

/** The extension as a database has it. */
export interface ExtensionInfo {
  /** The schema of the API functions and views (pg_extension.extnamespace). */
  schema: string;
  /** The installed version (pg_extension.extversion). */
  version: string;
  /** `name` qualified with the schema, quoted: `"cq".enqueue`. */
  q(name: string): string;
}

/** The database has no claimqueue extension (CREATE EXTENSION claimqueue). */
export class ExtensionMissingError extends ClaimQueueError {}
/** The installed extension's version is outside what this client supports. */
export class UnsupportedVersionError extends ClaimQueueError {}

const found = new WeakMap<object, Promise<ExtensionInfo>>();

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

function versionParts(version: string): number[] {
  return version.split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/** -1, 0 or 1 as version a is below, equal to or above b (numeric, dot by dot). */
export function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Throws UnsupportedVersionError unless `version` is within SUPPORTED_EXTENSION. */
export function checkVersion(version: string): void {
  if (compareVersions(version, SUPPORTED_EXTENSION.min) < 0 ||
      compareVersions(version, SUPPORTED_EXTENSION.below) >= 0) {
    throw new UnsupportedVersionError(
      `claimqueue extension ${version} is not supported by this client, which needs ` +
        `>= ${SUPPORTED_EXTENSION.min} and < ${SUPPORTED_EXTENSION.below}`,
      {
        code: 'QC000',
        hint: compareVersions(version, SUPPORTED_EXTENSION.min) < 0
          ? 'Run ALTER EXTENSION claimqueue UPDATE, or use an older client (docs/clients.md).'
          : 'Upgrade the client library to one that supports this extension version (docs/clients.md).',
      });
  }
}

async function lookUp(db: Queryable): Promise<ExtensionInfo> {
  const { rows } = await db.query(
    `SELECT n.nspname AS schema, e.extversion AS version
       FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
      WHERE e.extname = 'claimqueue'`);
  if (rows.length === 0) {
    throw new ExtensionMissingError('the claimqueue extension is not installed in this database', {
      code: 'QC000',
      hint: 'Run CREATE EXTENSION claimqueue SCHEMA claimqueue_api (or another schema of your own; docs/install.md).',
    });
  }
  const { schema, version } = rows[0] as { schema: string; version: string };
  checkVersion(version);
  const prefix = quoteIdent(schema) + '.';
  return { schema, version, q: (name: string) => prefix + name };
}

/**
 * The extension's schema and version for `db` (a pool, a client or a pool's client), looked up
 * once per object and kept; throws ExtensionMissingError or UnsupportedVersionError.
 */
export function extensionOf(db: Queryable): Promise<ExtensionInfo> {
  let info = found.get(db);
  if (!info) {
    info = lookUp(db);
    found.set(db, info);
    // A failed look-up is not kept: the extension may be created or updated meanwhile.
    info.catch(() => found.delete(db));
  }
  return info;
}

/** Forgets what was read for `db` (after ALTER EXTENSION ... UPDATE or SET SCHEMA). */
export function forgetExtension(db: Queryable): void {
  found.delete(db);
}
