import type { SeedResult } from './seed.js';

/**
 * Shown on the console (not the log stream) once, when seeding created something: the only
 * time the generated admin password and the demo key are ever visible. In production the
 * password itself stays in its 0600 file; the banner says where.
 */
export function printSeedBanner(seeded: SeedResult, gatewayUrl: string, controlPort: number): void {
  const lines: string[] = [];
  if (seeded.admin?.created) {
    lines.push(`Admin account: ${seeded.admin.email}`);
    if (seeded.admin.generatedPassword) lines.push(`Admin password (shown once): ${seeded.admin.generatedPassword}`);
    if (seeded.admin.passwordFile) {
      lines.push(
        `Admin password written to ${seeded.admin.passwordFile} (mode 0600, readable by this user only).`,
        'Sign in, change it with POST /v1/users/me/password, then delete the file.',
      );
    }
  }
  if (seeded.demo) {
    lines.push(
      `Demo project ${seeded.demo.projectId} created with an API key (shown once, keep it):`,
      `  ${seeded.demo.key}`,
      'Try it (served offline by the built-in mock provider):',
      `  curl -s ${gatewayUrl}/v1/chat/completions -H 'content-type: application/json' -H 'x-api-key: ${seeded.demo.key}' -d '{"model":"mock-1","messages":[{"role":"user","content":"Hello"}]}'`,
    );
  }
  if (lines.length === 0) return;
  lines.push(`Management API: http://127.0.0.1:${controlPort}`);
  const bar = '='.repeat(72);
  process.stdout.write(`\n${bar}\n${lines.join('\n')}\n${bar}\n\n`);
}
