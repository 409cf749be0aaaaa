// A display's printable QR sheet in Chromium: made right after the display is, printed to PDF on A4
// and on Letter (one page each, of that paper), and its code read back by a QR decoder (jsQR, on a
// screenshot of the sheet as printed) as exactly the display's customer page URL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
// jsqr is CommonJS: its function is module.exports, with itself as `default`, which is what the types name.
import jsqr from 'jsqr';
import type { Page } from 'playwright-core';
import { skipWithoutChromium as skip } from '../support/browser.ts';
import { openSetup, serving, signedInPage } from './admin-support.ts';

/** The PDF's pages' sizes in points ([width, height] of each /MediaBox). */
function pageSizes(pdf: Buffer): number[][] {
  const text = pdf.toString('latin1');
  return [...text.matchAll(/\/Type\s*\/Page\b[\s\S]*?\/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]/g)].map((m) => [
    Math.round(Number(m[3]) - Number(m[1])),
    Math.round(Number(m[4]) - Number(m[2])),
  ]);
}

/** Reads a QR code from a PNG: its pixels through a canvas of a blank page, then jsQR. */
async function decodePng(page: Page, png: Buffer): Promise<string | null> {
  const blank = await page.context().newPage();
  await blank.exposeBinding('png', () => `data:image/png;base64,${png.toString('base64')}`);
  // The page's own script, as text (the tests are compiled without the DOM's types).
  const { width, height, data } = (await blank.evaluate(`(async () => {
    const img = new Image();
    img.src = await window.png();
    await img.decode();
    const canvas = Object.assign(document.createElement('canvas'), { width: img.naturalWidth, height: img.naturalHeight });
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    const pixels = g.getImageData(0, 0, canvas.width, canvas.height).data;
    let binary = '';
    for (let i = 0; i < pixels.length; i += 0x8000) binary += String.fromCharCode(...pixels.subarray(i, i + 0x8000));
    return { width: canvas.width, height: canvas.height, data: btoa(binary) };
  })()`)) as { width: number; height: number; data: string };
  await blank.close();
  return jsqr.default(new Uint8ClampedArray(Buffer.from(data, 'base64')), width, height)?.data ?? null;
}

test('a new display’s QR sheet prints on A4 and on Letter, one page each, and its code reads back as the customer page URL', { skip }, async (t) => {
  const s = await serving(t);
  const page = await signedInPage(t, s.base, s.w.admin);
  await openSetup(page, s.base, s.w.locationId, 'equipment', 'Displays');
  await page.getByRole('button', { name: 'Add a display' }).click();
  const form = page.getByRole('dialog', { name: 'Add a display' });
  await form.getByLabel('Name', { exact: true }).fill('Entrance');
  await form.getByLabel('Help · Aide').check();
  await form.getByRole('button', { name: 'Add', exact: true }).click();

  const shown = page.getByRole('dialog', { name: 'The key of Entrance' });
  const url = await shown.getByLabel('Customer page').inputValue();
  assert.match(url, /\/help\/[A-Za-z0-9_-]{22,}$/);
  await shown.getByRole('button', { name: 'Print the QR sheet' }).click();

  const sheet = page.getByRole('article', { name: 'Printable sheet' });
  await sheet.locator('img.qr').waitFor();
  await page.waitForFunction('document.querySelector("img.qr")?.complete === true');
  const text = (await sheet.textContent()) ?? '';
  assert.ok(text.includes(`Store ${s.w.locationId}`) && text.includes('Help') && text.includes('Aide') && text.includes(url), text);

  for (const [paper, size] of [
    ['A4', [595, 842]],
    ['Letter', [612, 792]],
  ] as const) {
    await page.getByLabel('Paper').selectOption({ label: paper });
    const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: true });
    const sizes = pageSizes(pdf);
    assert.equal(sizes.length, 1, `${paper}: one page (${JSON.stringify(sizes)})`);
    assert.ok(Math.abs((sizes[0]?.[0] ?? 0) - size[0]) <= 1 && Math.abs((sizes[0]?.[1] ?? 0) - size[1]) <= 1, `${paper}: ${JSON.stringify(sizes)}`);
  }

  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.locator('.sheet-tools').isVisible(), false, 'printed alone, without its buttons');
  assert.equal(await page.locator('header.top').isVisible(), false);
  const decoded = await decodePng(page, await sheet.screenshot());
  assert.equal(decoded, url);
});
