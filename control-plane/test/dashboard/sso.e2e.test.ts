import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../harness.js';
import { startTestProvider, type TestProvider } from '../oidc-provider.js';
import { heading, launch, openTab, poll, shotFor, type SizeName } from './browser.js';

/**
 * Single sign-on in Chromium: the sign-in page offers "Sign in with SSO" when the control plane has
 * an identity provider; the button goes to the provider (a real one, oidc-provider) and comes back
 * signed in with the same session cookie as a password sign-in; a refusal comes back to the sign-in
 * page with its reason, once.
 */
let idp: TestProvider;
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  idp = await startTestProvider(() => [`${h.base}/v1/signins/oidc/callback`]);
  h = await startHarness('dashsso', {
    env: { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_ALLOWED_DOMAINS: 'example.test' },
  });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await idp?.close();
});

const SIZES: SizeName[] = ['wide', 'phone'];

describe.each(SIZES)('at the %s size', (size) => {
  it('signs in with the SSO button and keeps the session through a reload', { timeout: 60_000 }, async () => {
    const email = `sso-${randomBytes(3).toString('hex')}@example.test`;
    idp.signInAs({ sub: `sub-${email}`, email });
    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/`);
    expect(await heading(page)).toBe('Sign in');
    const sso = page.getByRole('link', { name: 'Sign in with SSO' });
    await poll(() => sso.isVisible()).toBe(true);
    await shotFor(page, 'signin-sso', size);
    // The password form is still there: PASSWORD_SIGNIN is on.
    expect(await page.getByLabel('Password').isVisible()).toBe(true);

    await sso.click();
    await poll(() => heading(page)).toBe('Projects');
    expect(new URL(page.url()).origin).toBe(h.base);
    expect(await page.getByRole('button', { name: `My account: ${email}` }).count()).toBe(1);
    const cookie = (await context.cookies()).find((c) => c.name === 'gateway_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/v1/signins' });

    await page.reload();
    await poll(() => heading(page)).toBe('Projects');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('comes back to the sign-in page with the reason when the sign-in is refused', { timeout: 60_000 }, async () => {
    const email = `outsider-${randomBytes(3).toString('hex')}@elsewhere.test`;
    idp.signInAs({ sub: `sub-${email}`, email });
    const { context, page } = await openTab(browser, size);
    await page.goto(`${h.base}/`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    const alert = page.getByRole('alert');
    await poll(() => alert.textContent()).toMatch(/Single sign-on failed: .*may not sign in here.*example\.test/);
    expect(await heading(page)).toBe('Sign in');
    // The reason never rides in the address (where a link could put any text), and is shown once.
    expect(new URL(page.url()).search).toBe('');
    expect(await page.evaluate('document.cookie')).not.toContain('gateway_sso_error');
    await page.reload();
    await poll(() => heading(page)).toBe('Sign in');
    expect(await page.getByRole('alert').count()).toBe(0);
    await context.close();
  });
});
