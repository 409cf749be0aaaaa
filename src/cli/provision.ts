// npm run provision -- FILE: applies a provisioning file to the configured database, all or nothing.
import fs from 'node:fs';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openConfiguredDb } from '../db/open.ts';
import { applyProvisioning } from '../provisioning/apply.ts';

const file = process.argv[2];
if (file === undefined) {
  console.error('usage: npm run provision -- FILE');
  process.exit(2);
}

try {
  const config = loadConfig(process.env);
  let input: unknown;
  try {
    input = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
  const db = await openConfiguredDb(config, { attach: true });
  try {
    await migrate(db);
    const { scan_codes: scanCodes, ...summary } = await applyProvisioning(db, systemClock, input, { source: file });
    console.log(
      `storeops: applied ${file}: ${Object.entries(summary)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}`,
    );
    // Shown this once (only their digests are kept): print each as a QR code of exactly this text.
    for (const c of scanCodes ?? []) console.log(`storeops: new scan code of ${c.kind} ${c.id}: ${c.scan_code}`);
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : (err as Error).message}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
