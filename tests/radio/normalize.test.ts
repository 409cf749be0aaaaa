// The normalize voice handler, text in, text out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeForSpeech } from '../../src/radio/normalize.ts';

const CASES: [string, string][] = [
  ['Aisle 5', 'Aisle 5'],
  ['$3.50', '3 dollars 50'],
  ['$4.99', '4 dollars 99'],
  ['$4.05', '4 dollars and 5 cents'],
  ['$1', '1 dollar'],
  ['$0.99', '99 cents'],
  ['$2.00', '2 dollars'],
  ['$4.5', '4 dollars 50'],
  ['$1,299.99 today', '1299 dollars 99 today'],
  ['3.50$', '3 dollars 50'],
  ['£2.50', '2 pounds 50'],
  ['€10', '10 euros'],
  ['99¢', '99 cents'],
  ['Price is $3.50.', 'Price is 3 dollars 50.'],
  ['10% off', '10 percent off'],
  ['2.5%', '2.5 percent'],
  ['Tom & Jerry', 'Tom and Jerry'],
  ['item #42', 'item number 42'],
  ['#sale today', 'sale today'],
  ['info@store', 'info at store'],
  ['2+1 offer', '2 plus 1 offer'],
  ['~5 minutes', 'about 5 minutes'],
  ['Mgr to Reg 3 asap, pls', 'manager to register 3 as soon as possible, please'],
  ['Dept. 7 needs help', 'department 7 needs help'],
  ['see the Mgr.', 'see the manager.'],
  ['No. 4 and no more', 'number 4 and no more'],
  ['there are no 5 dollar bills', 'there are no 5 dollar bills'],
  ['Ext 204', 'extension 204'],
  ['BOGO on 12 oz cans', 'buy one get one on 12 ounces cans'],
  ['1 lb of apples, 2 lbs of pears', '1 pound of apples, 2 pounds of pears'],
  ['back in 5 min', 'back in 5 minutes'],
  ['Rx ready at pharm', 'prescription ready at pharmacy'],
  ['shoes w/ laces, w/o tags', 'shoes with laces, without tags'],
  ['*** SALE ***', 'SALE'],
  ['  spaced   out  ', 'spaced out'],
  ['area and reg', 'area and reg'],
];

test('prices, percentages, symbols and store abbreviations read as words', () => {
  for (const [input, spoken] of CASES) assert.equal(normalizeForSpeech(input), spoken, input);
});

test('normalizing twice changes nothing more', () => {
  for (const [input] of CASES) {
    const once = normalizeForSpeech(input);
    assert.equal(normalizeForSpeech(once), once, input);
  }
});
