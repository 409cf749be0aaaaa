// npm run provision -- FILE: applies a provisioning file to the configured database, all or nothing.
// npm run provision -- --export FILE: writes the current setup as a provisioning file, without
// secrets (provisioning/export.ts).
import fs from 'node:fs';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openConfiguredDb } from '../db/open.ts';
import { EXAMPLE_SECRET_PROBLEM } from '../example-secrets.ts';
import { applyProvisioning } from '../provisioning/apply.ts';
import { exportProvisioning } from '../provisioning/export.ts';

const exporting = process.argv[2] === '--export';
const file = exporting ? process.argv[3] : process.argv[2];
if (file === undefined) {
  console.error('usage: npm run provision -- FILE\n       npm run provision -- --export FILE');
  process.exit(2);
}

try {
  const config = loadConfig(process.env);
  let input: unknown;
  if (!exporting) {
    try {
      input = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`);
    }
  }
  const db = await openConfiguredDb(config, { attach: true });
  try {
    await migrate(db);
    if (exporting) {
      fs.writeFileSync(file, `${JSON.stringify(await exportProvisioning(db), null, 2)}\n`);
      console.log(`storeops: wrote the current setup to ${file} (without secrets)`);
    } else {
      const {
        made_keys: made,
        scan_codes: scanCodes,
        example_secrets: examples,
        ...summary
      } = await applyProvisioning(db, systemClock, input, { source: file, production: config.production });
      console.log(
        `storeops: applied ${file}: ${Object.entries(summary)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}`,
      );
      // Shown here once: the service keeps only what checks them.
      for (const c of scanCodes ?? []) console.log(`storeops: new scan code of ${c.kind} ${c.id}: ${c.scan_code}`);
      for (const field of examples ?? []) console.error(`storeops: warning: ${file} ${field} ${EXAMPLE_SECRET_PROBLEM}`);
      for (const m of made ?? []) console.log(`storeops: made the ${m.kind === 'locker' ? 'api_key of locker' : 'key of display'} ${m.id}: ${m.key}`);
    }
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : (err as Error).message}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
