import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { PiiEntity } from '../contracts/guardrails.js';
import { ibanValid } from './iban.js';
import { luhnValid } from './luhn.js';
import { secretPatternsFor } from './secrets.js';
import type { Detector, Span } from './spans.js';

/**
 * The `pii` guardrail's detectors, one per entity. Candidates are found by simple patterns and
 * kept only when their checksum or structure holds (Luhn for cards, MOD 97 for IBANs, the
 * numbering plan for phones, octet ranges for IPv4), so an order number is not a card.
 */
const EMAIL_DOMAIN = /[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/y;
const LOCAL_PART = /[A-Za-z0-9._%+-]/;
/** A run of digits and separators long enough to be a phone number: where libphonenumber-js looks. */
const PHONE_CANDIDATE = /\+?\(?\d[\d\s().-]{5,}\d/g;
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const SSN = /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g;
const IPV4 = /\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b/g;
const DIGIT_DOT_DIGIT = /\d\.\d/;
const IPV6 = /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![0-9A-Fa-f:])|(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,5})?(?![0-9A-Fa-f:])/g;

function matches(re: RegExp, text: string, kind: string, keep?: (value: string) => boolean): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (keep === undefined || keep(m[0])) out.push({ start: m.index, end: m.index + m[0].length, kind });
  }
  return out;
}

/**
 * Emails found from each `@` outwards (the local part backwards, the domain by a sticky pattern):
 * a pattern scanning for the local part would try every position of the text.
 */
function emails(text: string): Span[] {
  const out: Span[] = [];
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_PART.test(text[start - 1]!)) start--;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const domain = EMAIL_DOMAIN.exec(text);
    if (domain !== null) out.push({ start, end: at + 1 + domain[0].length, kind: 'EMAIL' });
  }
  return out;
}

/**
 * Runs of digits that could be phone numbers (7 to 15 digits, E.164's range), each kept when
 * libphonenumber-js finds it valid in its country's numbering plan (national numbers read as US).
 * Parsing only the candidates keeps the library off the rest of the text. Its verdict (tens of
 * microseconds a number) is remembered per candidate, a bounded set: a conversation sends its
 * history again with every turn, so the same numbers come back request after request.
 */
const PHONE_VERDICTS = new Map<string, boolean>();
const PHONE_VERDICTS_MAX = 4096;

function validPhone(candidate: string): boolean {
  let valid = PHONE_VERDICTS.get(candidate);
  if (valid === undefined) {
    valid = parsePhoneNumberFromString(candidate, 'US')?.isValid() === true;
    if (PHONE_VERDICTS.size >= PHONE_VERDICTS_MAX) PHONE_VERDICTS.clear();
    PHONE_VERDICTS.set(candidate, valid);
  }
  return valid;
}

function phones(text: string): Span[] {
  const out: Span[] = [];
  PHONE_CANDIDATE.lastIndex = 0;
  for (let m = PHONE_CANDIDATE.exec(text); m !== null; m = PHONE_CANDIDATE.exec(text)) {
    let digits = 0;
    for (const ch of m[0]) if (ch >= '0' && ch <= '9') digits++;
    if (digits < 7 || digits > 15) continue;
    if (validPhone(m[0])) out.push({ start: m.index, end: m.index + m[0].length, kind: 'PHONE' });
  }
  return out;
}

const DETECTORS: Record<PiiEntity, Detector> = {
  email: emails,
  phone: phones,
  credit_card: (text) => matches(CARD, text, 'CREDIT_CARD', (value) => luhnValid(value.replace(/[ -]/g, ''))),
  iban: (text) => matches(IBAN, text, 'IBAN', (value) => ibanValid(value.replace(/ /g, ''))),
  us_ssn: (text) => matches(SSN, text, 'US_SSN'),
  // Each form scanned for only when the text has its separator between two digits.
  ip_address: (text) => [...(DIGIT_DOT_DIGIT.test(text) ? matches(IPV4, text, 'IP_ADDRESS') : []), ...(text.includes('::') || /[0-9A-Fa-f]:[0-9A-Fa-f]/.test(text) ? matches(IPV6, text, 'IP_ADDRESS') : [])],
  secret: (text) => {
    const out: Span[] = [];
    for (const { re } of secretPatternsFor(text)) {
      for (const span of matches(re, text, 'SECRET')) if (!out.some((s) => s.start <= span.start && span.end <= s.end)) out.push(span);
    }
    return out;
  },
};

/** One detector for the entities named (their matches, overlapping ones merged). */
export function piiDetector(entities: readonly PiiEntity[]): Detector {
  const detectors = entities.map((entity) => DETECTORS[entity]);
  return (text) => {
    const found: Span[] = [];
    for (const detect of detectors) found.push(...detect(text));
    return found;
  };
}
