// Tenancy and credential suites, in one test process (starting one costs more than most of them);
// each builds its own app and worlds. See docs/security.md.
import './lockers.ts';
import './cfh.ts';
import './radio.ts';
import './brute-force.ts';
