import { formatProfile } from './harness/profile-summary.js';

/** `node bench/dist/profile-main.js <file.cpuprofile>… [--top n]`: where a profiled process spent its time. */
const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt === -1 ? 25 : Number(args[topAt + 1]);
const files = args.filter((_, i) => topAt === -1 || (i !== topAt && i !== topAt + 1));
if (files.length === 0) {
  process.stderr.write('usage: node bench/dist/profile-main.js <file.cpuprofile>… [--top n]\n');
  process.exit(1);
}
for (const file of files) process.stdout.write(`${formatProfile(file, top)}\n\n`);
