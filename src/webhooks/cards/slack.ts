// A Slack incoming-webhook message in Block Kit (section 20): a header saying what changed, the
// facts as fields, the customer's words, the store, and a button opening the request in the staff
// app. Built against Slack's own published types (@slack/types, type-only: nothing of it runs).
//
// Escaping: header and button texts are plain_text, which Slack never parses; every mrkdwn text has
// &, < and > escaped as Slack documents, so a customer's "<!here>" cannot ping the channel and
// "<http://x|y>" cannot hide a link (Slack's control sequences all start with <).
import type { ActionsBlock, ContextBlock, HeaderBlock, KnownBlock, SectionBlock } from '@slack/types';
import type { CardFacts } from './facts.ts';

/** Slack's limits (Block Kit reference): a header's text, a field's, a section's, a button's. */
const HEADER_MAX = 150;
const FIELD_MAX = 2000;
const SECTION_MAX = 3000;
const BUTTON_MAX = 75;

export interface SlackMessage {
  /** The notification's text, and what clients without blocks show. */
  text: string;
  blocks: KnownBlock[];
}

/** Text for mrkdwn: Slack's three escapes. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cut to `max` characters (whole code points), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** mrkdwn of escaped text, cut so that the escapes still fit. */
const mrkdwn = (text: string, max: number) => ({ type: 'mrkdwn' as const, text: clip(slackEscape(text), max) });

export function slackMessage(card: CardFacts): SlackMessage {
  const header: HeaderBlock = { type: 'header', text: { type: 'plain_text', text: clip(card.headline, HEADER_MAX), emoji: false } };
  const blocks: KnownBlock[] = [header];
  if (card.facts.length > 0) {
    const fields = card.facts.slice(0, 10).map((f) => mrkdwn(`*${f.title}*\n${f.value}`, FIELD_MAX));
    const section: SectionBlock = { type: 'section', fields };
    blocks.push(section);
  }
  if (card.customerText !== null) {
    // Each line quoted: the customer's words set apart from ours.
    const quoted = slackEscape(card.customerText)
      .split('\n')
      .map((line) => `>${line}`)
      .join('\n');
    const section: SectionBlock = { type: 'section', text: { type: 'mrkdwn', text: clip(`*${slackEscape(card.customerTextTitle)}*\n${quoted}`, SECTION_MAX) } };
    blocks.push(section);
  }
  if (card.store !== null) {
    const context: ContextBlock = { type: 'context', elements: [mrkdwn(card.store, SECTION_MAX)] };
    blocks.push(context);
  }
  if (card.link !== null) {
    const actions: ActionsBlock = {
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: 'open_request',
          style: 'primary',
          text: { type: 'plain_text', text: clip(card.link.title, BUTTON_MAX) },
          url: card.link.url,
        },
      ],
    };
    blocks.push(actions);
  }
  return { text: clip(slackEscape(card.summary), SECTION_MAX), blocks };
}
