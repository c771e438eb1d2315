import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecret, newEventId, secretKey, secretProblem, sign } from './signing.js';

describe('Standard Webhooks signing', () => {
  it('reproduces the reference signature of the specification', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('generates 32 random bytes in the whsec_ form, each one different', () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(secretKey(a)).toHaveLength(32);
    expect(secretProblem(a)).toBeNull();
    expect(generateSecret()).not.toBe(a);
  });

  it('takes a caller secret of 24 to 64 bytes in canonical base64, and nothing else', () => {
    const of = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
    expect(secretProblem(of(24))).toBeNull();
    expect(secretProblem(of(64))).toBeNull();
    expect(secretProblem(of(24).replace(/=+$/, ''))).toBeNull();
    expect(secretProblem(of(23))).toMatch(/24 to 64 bytes/);
    expect(secretProblem(of(65))).toMatch(/24 to 64 bytes/);
    expect(secretProblem(randomBytes(32).toString('base64'))).not.toBeNull();
    expect(secretProblem(`whsec_${randomBytes(32).toString('base64url')}_-`)).not.toBeNull();
    // 32 bytes whose last character carries bits the decoder drops: two texts for one secret.
    expect(secretProblem('whsec_' + 'A'.repeat(42) + 'B=')).not.toBeNull();
    expect(secretProblem('whsec_' + 'A'.repeat(42) + 'A=')).toBeNull();
    expect(secretProblem('whsec_ ' + randomBytes(32).toString('base64'))).not.toBeNull();
  });

  it('makes event ids with no dot, the separator of the signed content', () => {
    const id = newEventId();
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(newEventId()).not.toBe(id);
  });
});
