// The engines read SSML, so user text is escaped: "<break time='60s'/>" from a caller is spoken
// as words (or dropped), never obeyed.

// XML 1.0 forbids most control characters; eSpeak would otherwise read some of them aloud.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]/g;

export function escapeSsmlText(text: string): string {
  return text.replace(CONTROL, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

export function ssmlOf(text: string): string {
  return `<speak>${escapeSsmlText(text)}</speak>`;
}
