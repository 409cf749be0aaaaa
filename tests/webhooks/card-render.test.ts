// How a Teams card renders (section 20, the picture in docs/chat-cards.md): a card for a CFH event
// built by the service's own formatter, rendered by Microsoft's Adaptive Cards library (the
// renderer Teams' web client is built on) in Chromium, with markdown-it as its Markdown processor
// (the library ships none; Teams renders TextBlocks as Markdown). A reader sees the option, the
// place, the status, who has it, the customer's words exactly as typed, and the button to the staff
// app. With UPDATE_SCREENSHOTS=1 it writes docs/images/chat-card-teams.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { outgoing, type Formattable } from '../../src/webhooks/formats.ts';
import { browserContext, skipWithoutChromium } from '../support/browser.ts';
import type { Teardown } from '../support/teardown.ts';

// The browser bundles, from node_modules (markdown-it's package exports do not list its browser build).
const MODULES = path.resolve(import.meta.dirname, '..', '..', 'node_modules');
const BASE = 'https://storeops.example.com';
const HOSTILE = 'Need 2 gallons of <b>white</b>, see [my order](http://evil.example) **now** & <!here>';
const SHOT = path.resolve(import.meta.dirname, '..', '..', 'docs', 'images', 'chat-card-teams.png');

/** The Teams message the service sends for Ann claiming a display's request after 3 minutes. */
function teamsCard(language: 'en' | 'fr', messageId: string): unknown {
  const d: Formattable = {
    format: 'teams',
    secret: 'unused-by-chat-formats',
    event: {
      uuid: '00000000-0000-4000-8000-000000000035',
      type: 'callforhelp',
      status: 'claimed',
      created_at: '2026-11-28T15:03:05.000Z',
      details: { message_id: messageId, type: 'display', name: 'Paint counter', claimed_by: 'Ann', option_text: 'Paint help' },
      location_id: 10,
      internal_id: messageId,
      organization_id: 1,
      message: null,
    },
    store_number: '010',
    language,
    location_name: 'Store 10',
    request: { created_at: '2026-11-28T15:00:00.000Z', custom_text: HOSTILE, option_text_en: 'Paint help', option_text_fr: 'Aide peinture' },
  };
  const message = JSON.parse(outgoing(d, new Date(), BASE).body) as { attachments: { content: unknown }[] };
  return message.attachments[0]?.content;
}

/** A page with the card rendered by the Adaptive Cards library, in Teams' light theme's width. */
async function rendered(t: Teardown, card: unknown): Promise<Page> {
  const context = await browserContext(t, { viewport: { width: 460, height: 520 } });
  const page = await context.newPage();
  await page.setContent(
    '<!doctype html><meta charset="utf-8"><body style="margin:0;padding:16px;background:#f5f5f5;font-family:Segoe UI,sans-serif"><div id="card" style="background:#fff;border-radius:6px;box-shadow:0 1px 3px #0003"></div>',
  );
  await page.addStyleTag({ path: path.join(MODULES, 'adaptivecards/dist/adaptivecards.css') });
  await page.addScriptTag({ path: path.join(MODULES, 'markdown-it/dist/browser/markdown-it.umd.min.js') });
  await page.addScriptTag({ path: path.join(MODULES, 'adaptivecards/dist/adaptivecards.min.js') });
  await page.evaluate((json) => {
    const w = globalThis as unknown as {
      AdaptiveCards: {
        AdaptiveCard: {
          new (): { parse(j: unknown): void; render(): unknown };
          onProcessMarkdown: (text: string, r: { outputHtml: string; didProcess: boolean }) => void;
        };
      };
      markdownit: () => { render(s: string): string };
      document: { getElementById(id: string): { appendChild(e: unknown): void } };
    };
    const md = w.markdownit();
    w.AdaptiveCards.AdaptiveCard.onProcessMarkdown = (text, result) => {
      result.outputHtml = md.render(text);
      result.didProcess = true;
    };
    const card = new w.AdaptiveCards.AdaptiveCard();
    card.parse(json);
    w.document.getElementById('card').appendChild(card.render());
  }, card);
  return page;
}

for (const [language, expected] of [
  [
    'en',
    {
      headline: 'Ann has it: Paint help',
      facts: ['Option', 'Paint help', 'Place', 'Paint counter (display)', 'Waiting time', '3 min', 'Status', 'Claimed', 'Who has it', 'Ann'],
      button: 'Open in the staff app',
    },
  ],
  [
    'fr',
    {
      headline: "Ann s'en occupe : Aide peinture",
      facts: ['Aide peinture', 'Emplacement', 'Paint counter (affichette)', "Temps d'attente", '3 min', 'Statut', 'Prise en charge', "Qui s'en occupe", 'Ann'],
      button: "Ouvrir dans l'app du personnel",
    },
  ],
] as const) {
  test(
    `Teams (${language}): the rendered card shows the option, place, status, who has it, the customer's words as typed and the staff app button`,
    { skip: skipWithoutChromium },
    async (t) => {
      const messageId = `m-35-${language}`;
      const page = await rendered(t, teamsCard(language, messageId));
      const card = page.locator('#card .ac-adaptiveCard');
      const text = await card.innerText();
      assert.ok(text.includes(expected.headline), text);
      let from = 0;
      for (const fact of expected.facts) {
        const at = text.indexOf(fact, from);
        assert.ok(at >= 0, `"${fact}" shown, in order, in:\n${text}`);
        from = at + fact.length;
      }
      assert.ok(text.includes(HOSTILE), `the customer's words shown exactly as typed:\n${text}`);
      assert.equal(await card.locator('a[href*="evil.example"], b').count(), 0, 'no hidden link, no markup from the customer');
      assert.equal(await card.locator('strong:has-text("now")').count(), 0, '** formats nothing');
      assert.ok(text.includes('Store 10 · 010'));

      const button = card.getByRole('link', { name: expected.button, exact: true });
      assert.equal(await button.count(), 1);
      // What the host (Teams) is asked to open when the button is pressed.
      await page.evaluate(() => {
        const w = globalThis as unknown as { AdaptiveCards: { AdaptiveCard: { onExecuteAction: (a: { url?: string }) => void } }; opened?: string };
        w.AdaptiveCards.AdaptiveCard.onExecuteAction = (a) => (w.opened = a.url);
      });
      await button.click();
      const opened = await page.evaluate(() => (globalThis as unknown as { opened?: string }).opened);
      assert.equal(opened, `${BASE}/staff/r/${messageId}`);

      if (language === 'en' && process.env.UPDATE_SCREENSHOTS === '1') {
        fs.mkdirSync(path.dirname(SHOT), { recursive: true });
        await page.locator('body').screenshot({ path: SHOT });
      }
    },
  );
}
