import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectFitsViewport, heading, launch, openTab, poll, shotFor, signIn, type SizeName } from './browser.js';

/**
 * Accounts (account admins) and project members in Chromium, at 1440×900 and 390×844: create an
 * account (a refused password shown on its field), find it, change its account role, disable and
 * enable it, set a new password; add members by email, change a role, remove one, leave a
 * project; the last owner cannot be removed or leave; a viewer sees no controls it cannot use.
 */
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashaccounts');
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const SIZES: SizeName[] = ['wide', 'phone'];
const suffix = () => randomBytes(3).toString('hex');
const signinStatus = async (email: string, password: string) => (await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password } })).status;

describe.each(SIZES)('at the %s size', (size) => {
  it('creates, finds, re-roles, disables, enables and resets accounts', { timeout: 90_000 }, async () => {
    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/accounts`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await poll(() => heading(page)).toBe('Accounts');

    const email = `dana-${size}-${suffix()}@example.test`;
    const form = page.getByRole('region', { name: 'Create an account' });
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('First password').fill('short');
    await form.getByRole('button', { name: 'Create account' }).click();
    const problem = page.locator('#new-account-password-problem');
    await poll(() => problem.textContent()).toContain('Use at least 12 characters.');
    expect(await problem.textContent()).not.toContain('body.');
    await form.getByLabel('First password').fill(email.toUpperCase());
    expect(await problem.count()).toBe(0);
    await form.getByRole('button', { name: 'Create account' }).click();
    await poll(() => problem.textContent()).toContain('cannot be the account’s email address');
    await form.getByLabel('First password').fill('dana first passphrase');
    await form.getByRole('button', { name: 'Create account' }).click();
    await poll(() => page.locator('.toasts').textContent()).toContain(`Account ${email} created.`);
    expect(await signinStatus(email, 'dana first passphrase')).toBe(200);

    // Search narrows the list to the accounts whose email contains the text.
    await page.getByLabel('Email contains').fill(`dana-${size}`);
    await page.getByRole('button', { name: 'Search' }).click();
    const rows = page.getByRole('region', { name: 'All accounts' }).locator('tbody tr');
    await poll(() => rows.count()).toBe(1);
    const row = rows.first();
    expect(await row.textContent()).toContain(email);

    await row.getByLabel(`Account role of ${email}`).selectOption('admin');
    await poll(() => page.locator('.toasts').textContent()).toContain(`${email} is now an account admin.`);
    await poll(async () => (await h.api('GET', `/v1/users?email=${encodeURIComponent(email)}`, { token: h.adminToken })).body.data[0].role).toBe('admin');

    await row.getByRole('button', { name: `Disable ${email}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Disable ${email}?` });
    await poll(() => confirm.isVisible()).toBe(true);
    await confirm.getByRole('button', { name: 'Disable account' }).click();
    await poll(() => row.textContent()).toContain('disabled');
    expect(await signinStatus(email, 'dana first passphrase')).toBe(401);
    await expectFitsViewport(page, 'accounts');
    await shotFor(page, 'accounts', size);
    await row.getByRole('button', { name: `Enable ${email}` }).click();
    await poll(() => row.textContent()).toContain('enabled');

    await row.getByRole('button', { name: `Set a new password for ${email}` }).click();
    const reset = page.getByRole('dialog', { name: `New password for ${email}` });
    await poll(() => reset.isVisible()).toBe(true);
    await reset.getByLabel('New password').fill('tiny');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await poll(() => reset.locator('#reset-password-problem').textContent()).toContain('Use at least 12 characters.');
    await reset.getByLabel('New password').fill('a temporary passphrase');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await poll(() => reset.isVisible()).toBe(false);
    expect(await signinStatus(email, 'a temporary passphrase')).toBe(200);

    // Your own row offers your own password change, as an action (not a "label: value" line).
    await page.getByLabel('Email contains').fill(ADMIN_EMAIL);
    await page.getByRole('button', { name: 'Search' }).click();
    await poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).not.toContain('Your password:');
    await rows.first().getByRole('button', { name: 'Change my password' }).click();
    const own = page.getByRole('dialog', { name: 'Change your password' });
    await poll(() => own.isVisible()).toBe(true);
    expect(await own.getByLabel('Current password').count()).toBe(1);
    await own.getByRole('button', { name: 'Cancel' }).click();
    await poll(() => own.isVisible()).toBe(false);

    // Paging: one more account than fits a page is a second page.
    const more = await Promise.all(
      Array.from({ length: 26 }, (_, i) =>
        h.api('POST', '/v1/users', { token: h.adminToken, body: { email: `pager-${size}-${i}-${suffix()}@example.test`, password: 'a pager passphrase' } }),
      ),
    );
    expect(more.every((r) => r.status === 201)).toBe(true);
    await page.getByLabel('Email contains').fill(`pager-${size}`);
    await page.getByRole('button', { name: 'Search' }).click();
    await poll(() => rows.count()).toBe(25);
    await page.getByRole('button', { name: 'Next page' }).click();
    await poll(() => rows.count()).toBe(1);
    await expectFitsViewport(page, 'accounts, second page');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('adds members by email, changes a role, removes one, keeps the last owner, and shows a viewer no controls', { timeout: 90_000 }, async () => {
    const owner = await h.createUser();
    const project = await h.api('POST', '/v1/projects', { token: owner.token, body: { name: `Team ${size}` } });
    expect(project.status).toBe(201);
    const projectId = project.body.id as string;
    const [alex, vic] = [await h.createUser(), await h.createUser()];

    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/members?project=${projectId}`);
    await signIn(page, owner.email, owner.password);
    await poll(() => heading(page)).toBe('Members');
    const list = page.getByRole('region', { name: `Members of “Team ${size}”` });
    await poll(() => list.locator('tbody tr').count()).toBe(1);

    // The only owner: role, removal and leaving disabled, with the reason next to them.
    const ownerRow = list.getByRole('row', { name: new RegExp(owner.email) });
    expect(await ownerRow.getByRole('button', { name: 'Leave project' }).isDisabled()).toBe(true);
    expect(await ownerRow.getByLabel(`Role of ${owner.email}`).isDisabled()).toBe(true);
    expect(await ownerRow.textContent()).toContain('The only owner: make someone else owner first.');

    // An unknown email is a problem of the email field, in words; it clears when the field changes.
    const add = page.getByRole('region', { name: 'Add a member' });
    await add.getByLabel('Email').fill('nobody-here@example.test');
    await add.getByRole('button', { name: 'Add member' }).click();
    const problem = page.locator('#member-email-problem');
    await poll(() => problem.textContent()).toContain('No account has this email.');
    await add.getByLabel('Email').fill(alex.email.toUpperCase());
    expect(await problem.count()).toBe(0);
    await add.getByLabel('Role').selectOption('member');
    await add.getByRole('button', { name: 'Add member' }).click();
    await poll(() => page.locator('.toasts').textContent()).toContain(`${alex.email} added as member.`);
    await add.getByLabel('Email').fill(vic.email);
    await add.getByLabel('Role').selectOption('viewer');
    await add.getByRole('button', { name: 'Add member' }).click();
    await poll(() => list.locator('tbody tr').count()).toBe(3);

    const alexRow = list.getByRole('row', { name: new RegExp(alex.email) });
    await alexRow.getByLabel(`Role of ${alex.email}`).selectOption('owner');
    await poll(() => page.locator('.toasts').textContent()).toContain(`${alex.email} is now owner.`);
    // Two owners now: the first may leave.
    await poll(() => ownerRow.getByRole('button', { name: 'Leave project' }).isDisabled()).toBe(false);
    await expectFitsViewport(page, 'members');
    await shotFor(page, 'members', size);

    await alexRow.getByLabel(`Role of ${alex.email}`).selectOption('admin');
    await poll(() => page.locator('.toasts').textContent()).toContain(`${alex.email} is now admin.`);
    await alexRow.getByRole('button', { name: `Remove ${alex.email}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Remove ${alex.email}?` });
    await confirm.getByRole('button', { name: 'Remove member' }).click();
    await poll(() => list.locator('tbody tr').count()).toBe(2);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await poll(() => heading(page)).toBe('Sign in');

    // The viewer: no form, no role choices, no Remove; only leaving, which it does.
    await page.goto(`${h.base}/members?project=${projectId}`);
    await signIn(page, vic.email, vic.password);
    await poll(() => list.locator('tbody tr').count()).toBe(2);
    await poll(() => page.getByText('You are a viewer of this project').count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Add a member' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add member' }).count()).toBe(0);
    expect(await list.getByRole('combobox').count()).toBe(0);
    expect(await list.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    await expectFitsViewport(page, 'members as a viewer');
    await shotFor(page, 'members-viewer', size);
    await list.getByRole('button', { name: 'Leave project' }).click();
    const leave = page.getByRole('alertdialog', { name: `Leave “Team ${size}”?` });
    await leave.getByRole('button', { name: 'Leave project' }).click();
    await poll(() => heading(page)).toBe('Projects');
    const members = await h.api('GET', `/v1/projects/${projectId}/members`, { token: owner.token });
    expect(members.body.data.map((m: { email: string }) => m.email)).toEqual([owner.email]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
