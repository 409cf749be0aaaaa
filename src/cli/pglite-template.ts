// npm run pglite-template: remakes the template a new embedded database is copied from
// (src/db/pglite-template/), with the installed PGlite. Run it after upgrading @electric-sql/pglite.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { installedPgliteVersion, TEMPLATE_FILE, TEMPLATE_VERSION_FILE } from '../db/pglite-template.ts';

const pglite = await PGlite.create('memory://');
try {
  const dump = await pglite.dumpDataDir('gzip');
  fs.mkdirSync(path.dirname(TEMPLATE_FILE), { recursive: true });
  fs.writeFileSync(TEMPLATE_FILE, Buffer.from(await dump.arrayBuffer()));
  fs.writeFileSync(TEMPLATE_VERSION_FILE, `${JSON.stringify({ pglite: installedPgliteVersion() }, null, 2)}\n`);
  console.log(`storeops: wrote ${path.relative(process.cwd(), TEMPLATE_FILE)} (PGlite ${installedPgliteVersion()})`);
} finally {
  await pglite.close();
}
