// The hub's browser files, served at /assets/<name> from an allowlist made once at start: the files of
// scripts/hub/assets/ (no folders, no symlinks, no dotfiles, known types only). A name not in the list is a 404,
// whatever it looks like; nothing from node_modules is served (the live chart is the hub's own SVG).
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ASSETS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

export interface Asset {
  file: string;
  type: string;
}

export function assetAllowlist(dir = ASSETS_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // No assets folder: nothing to serve.
  }
  for (const name of names) {
    const type = TYPES[path.extname(name).toLowerCase()];
    const file = path.join(dir, name);
    if (!type || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || !lstatSync(file).isFile()) continue;
    assets.set(name, { file, type });
  }
  return assets;
}

/** The file's bytes, or undefined when it vanished since the list was made. */
export function readAsset(asset: Asset): Buffer | undefined {
  try {
    return readFileSync(asset.file);
  } catch {
    return undefined;
  }
}
