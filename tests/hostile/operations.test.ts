// The hostile-input suites of every operation, in one test process: starting one (PGlite, its
// migrations, the modules) costs more than most of these suites, and each builds its own app and
// worlds anyway. See docs/security.md.
import './lockers.ts';
import './cfh.ts';
import './radio.ts';
import './service.ts';
