// The release this code is, from package.json (CHANGELOG.md): the OpenAPI document's info.version
// and the name each database session gives itself (application_name), by which an upgrade sees the
// instances of an earlier release.
import packageJson from '../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;

/** The application_name of this release's database sessions. */
export const APPLICATION_NAME = `storeops ${VERSION}`;
