// Launches Debian's Chromium for the browser tests through playwright-core (its own browser download
// cannot work here). CI installs Chromium (.ci/run) and sets HOTPATH_REQUIRE_BROWSER=1, so there a missing
// browser fails the suite; elsewhere the browser tests are skipped with the reason.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = [process.env.HOTPATH_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));

export const chromiumPath: string | undefined = CANDIDATES.find((p) => existsSync(p));

export const browserMissing: string | undefined = chromiumPath
  ? undefined
  : `no Chromium at ${CANDIDATES.join(' or ')} (apt-get install chromium, or set HOTPATH_CHROMIUM)`;

if (browserMissing && process.env.HOTPATH_REQUIRE_BROWSER === '1') throw new Error(`browser tests required here, but ${browserMissing}`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    // The flags FIELD-NOTES.md measured: no sandbox (root in a container), no GPU, nothing fetched from the network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
