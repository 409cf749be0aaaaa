// The release this code is, from package.json: the OpenAPI document's info.version and the name
// each database session gives itself (application_name), by which an upgrade sees older instances.
import fs from 'node:fs';
import path from 'node:path';

export const VERSION: string = (JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }).version;

/** The application_name of this release's database sessions. */
export const APPLICATION_NAME = `storeops ${VERSION}`;
