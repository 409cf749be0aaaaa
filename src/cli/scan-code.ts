// npm run scan-code -- KIND ID: makes a new scan code for an option (cfh_option), a call button
// (call_button) or a display (display), printed this once to be printed as a QR code on the button or
// beside the display (contract section 19). The old code stops working at once.
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openConfiguredDb } from '../db/open.ts';
import { provisioningActor } from '../audit/record.ts';
import { rotateScanCode, SCAN_TARGETS, type ScanTarget } from '../cfh/scan-codes.ts';

const [kind, rawId] = process.argv.slice(2);
const id = Number(rawId);
if (kind === undefined || !(kind in SCAN_TARGETS) || !Number.isInteger(id) || id < 1) {
  console.error(`usage: npm run scan-code -- ${Object.keys(SCAN_TARGETS).join('|')} ID`);
  process.exit(2);
}

try {
  const config = loadConfig(process.env);
  const db = await openConfiguredDb(config, { attach: true });
  try {
    await migrate(db);
    const code = await rotateScanCode({ db, clock: systemClock }, provisioningActor('npm run scan-code'), kind as ScanTarget, id);
    if (code === null) {
      console.error(`storeops: there is no ${kind} ${id}`);
      process.exitCode = 1;
    } else {
      console.log(`\n  The new scan code of ${kind} ${id}, shown this once (print it as a QR code that encodes exactly this text):\n\n    ${code}\n`);
    }
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(`storeops: ${err instanceof ConfigError ? `configuration error: ${err.message}` : (err as Error).message}`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}
