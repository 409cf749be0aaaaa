// The platforms' own checks of what a chat endpoint receives. Teams: Microsoft's Adaptive Cards
// library (`adaptivecards`, the renderer Teams' web client is built on) parses the card and reports
// every unknown element, unknown action and invalid property value; no npm package ships the
// adaptive-card.json schema file. Slack: Slack publishes no JSON schema (it validates online, with
// blocks.validate); the builder is typed with Slack's own @slack/types, and here the Block Kit
// reference's rules are checked: the known block and element types, and the documented limits.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface SerializationContext {
  eventCount: number;
  getEventAt(i: number): { message: string };
}
interface AdaptiveCardsLib {
  AdaptiveCard: new () => { parse(json: unknown, context: SerializationContext): void; validateProperties(): { validationEvents: { message: string }[] } };
  SerializationContext: new () => SerializationContext;
}

// The library's CommonJS bundle: its ES build imports without file extensions, which Node refuses.
const AC = require('adaptivecards/dist/adaptivecards.js') as AdaptiveCardsLib;

/** What the Adaptive Cards library finds wrong with a card (none: it renders as sent). */
export function adaptiveCardProblems(card: unknown): string[] {
  const problems: string[] = [];
  const c = card as { type?: unknown; version?: unknown; body?: unknown };
  if (c?.type !== 'AdaptiveCard') problems.push('type must be AdaptiveCard');
  if (typeof c?.version !== 'string') problems.push('version is required');
  const parsed = new AC.AdaptiveCard();
  const context = new AC.SerializationContext();
  parsed.parse(card, context);
  for (let i = 0; i < context.eventCount; i++) problems.push(context.getEventAt(i).message);
  for (const e of parsed.validateProperties().validationEvents) problems.push(e.message);
  return problems;
}

const BLOCK_TYPES = new Set(['header', 'section', 'context', 'actions', 'divider']);

/** What Block Kit's reference says is wrong with an incoming-webhook message (the blocks this service sends). */
export function slackMessageProblems(message: unknown): string[] {
  const problems: string[] = [];
  const m = message as { text?: unknown; blocks?: unknown };
  if (typeof m?.text !== 'string' || m.text === '') problems.push('text (the notification) is required with blocks');
  if (!Array.isArray(m?.blocks) || m.blocks.length === 0 || m.blocks.length > 50) return [...problems, 'blocks: 1 to 50'];
  const text = (t: unknown, where: string, max: number, type?: string) => {
    const o = t as { type?: unknown; text?: unknown };
    if (o?.type !== 'plain_text' && o?.type !== 'mrkdwn') problems.push(`${where}.type must be plain_text or mrkdwn`);
    if (type !== undefined && o?.type !== type) problems.push(`${where}.type must be ${type}`);
    if (typeof o?.text !== 'string' || o.text.length === 0 || o.text.length > max) problems.push(`${where}.text: 1 to ${max} characters`);
  };
  for (const [i, b] of (m.blocks as Record<string, unknown>[]).entries()) {
    const where = `blocks[${i}]`;
    if (!BLOCK_TYPES.has(String(b.type))) problems.push(`${where}.type ${String(b.type)} is not a block this message should carry`);
    if (b.type === 'header') text(b.text, `${where}.text`, 150, 'plain_text');
    if (b.type === 'section') {
      if (b.text === undefined && b.fields === undefined) problems.push(`${where}: text or fields`);
      if (b.text !== undefined) text(b.text, `${where}.text`, 3000);
      if (b.fields !== undefined) {
        if (!Array.isArray(b.fields) || b.fields.length > 10) problems.push(`${where}.fields: at most 10`);
        else b.fields.forEach((f, j) => text(f, `${where}.fields[${j}]`, 2000));
      }
    }
    if (b.type === 'context') {
      if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > 10) problems.push(`${where}.elements: 1 to 10`);
      else b.elements.forEach((e, j) => text(e, `${where}.elements[${j}]`, 3000));
    }
    if (b.type === 'actions') {
      if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > 25) problems.push(`${where}.elements: 1 to 25`);
      else
        (b.elements as Record<string, unknown>[]).forEach((e, j) => {
          if (e.type !== 'button') problems.push(`${where}.elements[${j}] is not a button`);
          text(e.text, `${where}.elements[${j}].text`, 75, 'plain_text');
          if (typeof e.url !== 'string' || e.url.length > 3000 || !/^https?:\/\//.test(e.url)) problems.push(`${where}.elements[${j}].url`);
          if (e.action_id !== undefined && (typeof e.action_id !== 'string' || e.action_id.length > 255)) problems.push(`${where}.elements[${j}].action_id`);
          if (e.style !== undefined && e.style !== 'primary' && e.style !== 'danger') problems.push(`${where}.elements[${j}].style`);
        });
    }
    if (b.block_id !== undefined && (typeof b.block_id !== 'string' || b.block_id.length > 255)) problems.push(`${where}.block_id`);
  }
  return problems;
}
