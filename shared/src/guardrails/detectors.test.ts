import { describe, expect, it } from 'vitest';
import { ibanValid } from './iban.js';
import { luhnValid } from './luhn.js';
import { Masker } from './masker.js';
import { piiDetector } from './pii.js';
import { patternProblem, RE2_ENGINE, regexDetector } from './re2.js';
import { secretPatternsFor } from './secrets.js';
import { checkGuardrails } from './validate.js';

const found = (entities: Parameters<typeof piiDetector>[0], text: string): string[] => piiDetector(entities)(text).map((s) => text.slice(s.start, s.end));

describe('guardrail detectors', () => {
  it('Luhn accepts card numbers and refuses a changed digit', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(found(['credit_card'], 'pay 4111 1111 1111 1111 or 4111-1111-1111-1112')).toEqual(['4111 1111 1111 1111']);
  });

  it('IBAN checksum: valid ones found with or without spaces, a changed digit refused', () => {
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
    expect(found(['iban'], 'to DE89 3704 0044 0532 0130 00, not DE89370400440532013001')).toEqual(['DE89 3704 0044 0532 0130 00']);
  });

  it('phones by libphonenumber-js, not any run of digits', () => {
    expect(found(['phone'], 'call +33 6 12 34 56 78 or (415) 555-2671')).toEqual(['+33 6 12 34 56 78', '(415) 555-2671']);
    expect(found(['phone'], 'order 12345')).toEqual([]);
  });

  it('emails, US SSNs and IP addresses', () => {
    expect(found(['email'], 'write to ann.lee+x@mail.example.org.')).toEqual(['ann.lee+x@mail.example.org']);
    expect(found(['us_ssn'], '123-45-6789 but not 000-12-3456')).toEqual(['123-45-6789']);
    expect(found(['ip_address'], 'from 192.168.1.20 and 2001:db8::1, not 999.1.1.1')).toEqual(['192.168.1.20', '2001:db8::1']);
  });

  it('secrets of the major providers and clouds, and JWTs', () => {
    const text = [
      'sk-proj-abcdefghijklmnopqrstuvwxyz0123',
      'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345',
      'AKIAIOSFODNN7EXAMPLE',
      'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      'xoxb-1234567890-abcdefghij',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ].join(' and ');
    expect(found(['secret'], text)).toHaveLength(6);
    expect(found(['secret'], 'a task-list and sk-short')).toEqual([]);
  });

  it('numbers placeholders per kind, the same value the same number', () => {
    const masker = new Masker();
    const detect = piiDetector(['email']);
    const first = 'a@x.io then b@x.io';
    expect(masker.apply(first, detect(first))).toBe('<EMAIL_1> then <EMAIL_2>');
    const second = 'again b@x.io and a@x.io';
    expect(masker.apply(second, detect(second))).toBe('again <EMAIL_2> and <EMAIL_1>');
  });

  it.each(['native', 'wasm'] as const)('runs user patterns in RE2 (%s) and refuses what RE2 cannot run in linear time', (engine) => {
    const detect = (patterns: string[], text: string) => regexDetector(patterns, 'X', engine)(text).map((s) => text.slice(s.start, s.end));
    expect(regexDetector(['proj-[0-9]+'], 'CODE', engine)('see proj-42 and proj-7').map((s) => s.start)).toEqual([4, 16]);
    // Indexes are UTF-16 units of the string, whatever precedes the match.
    const text = 'é😀 naïve PROJ-1 and ünï PROJ-22';
    expect(detect(['PROJ-[0-9]+'], text)).toEqual(['PROJ-1', 'PROJ-22']);
    expect(detect(['(?i)naïve'], text)).toEqual(['naïve']);
    expect(detect(['\\p{So}'], text)).toEqual(['😀']);
    // An empty match does not hold the scan in place, nor split a character.
    expect(regexDetector(['x*'], 'X', engine)('a😀b').every((s) => s.start === s.end)).toBe(true);
    expect(patternProblem('(a)\\1', engine)).toMatch(/invalid escape/);
    expect(patternProblem('foo(?=bar)', engine)).toMatch(/invalid perl operator/);
    expect(patternProblem('[unclosed', engine)).not.toBeNull();
    // The classic catastrophic pattern is accepted, and runs in linear time.
    expect(regexDetector(['(a+)+$'], 'X', engine)('a'.repeat(50_000) + 'b')).toEqual([]);
  });

  it('runs only the secret patterns whose literals the text holds', () => {
    expect(secretPatternsFor('a prompt with no credential in it')).toEqual([]);
    const picked = secretPatternsFor('key sk-ant-api03-x').map((p) => p.literals);
    expect(picked).toEqual([['sk-ant-'], ['sk-']]);
  });

  it('uses the native RE2 module where it is installed', () => {
    // The optional dependency builds wherever the documented toolchain is present, as here.
    expect(RE2_ENGINE).toBe('native');
  });

  it('refuses a list naming the guardrail at fault', () => {
    const refused = checkGuardrails([
      { id: 'ok', stage: 'input', action: 'block', type: 'pii', entities: ['email'] },
      { id: 'bad-re', stage: 'both', action: 'mask', type: 'regex', patterns: ['x(?<=y)'] },
    ]);
    expect(refused).toMatchObject({ guardrail: 'bad-re' });
    expect(checkGuardrails([{ id: 'm', stage: 'input', action: 'mask', type: 'moderation', provider: 'openai' }])).toMatchObject({ guardrail: 'm' });
    expect(checkGuardrails([{ id: 'w', stage: 'input', action: 'block', type: 'webhook', url: 'http://127.0.0.1:1/x' }])).toEqual({
      guardrails: [{ id: 'w', stage: 'input', action: 'block', type: 'webhook', url: 'http://127.0.0.1:1/x', secret: '', timeout_ms: 2000, failure_mode: 'closed' }],
    });
  });
});
